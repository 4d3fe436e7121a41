"""A hostile request as it goes on the wire, and what generators build requests from.

Requests are kept as bytes and sent through a generic channel call, so garbage that no
message could hold travels exactly like a well-formed message would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from google.protobuf.message import Message

from cardtable.hostile.rules_states import RealState
from cardtable.hostile.scene import Scene
from cardtable_api.rules.v1 import rules_pb2
from cardtable_api.table.v1 import table_pb2

TABLE_SERVICE = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
RULES_SERVICE = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
Metadata = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class HostileRequest:
    """One call: which service and method, the payload bytes, the metadata."""

    kind: str
    service: str
    method: str
    payload: bytes
    metadata: Metadata = ()
    #: WatchTable and WatchTurns answer with a stream: the first message or the error is read.
    streaming: bool = False
    #: Megabyte payloads go on a channel of their own, so a connection the server
    #: closes over one cannot fail the calls that follow.
    own_channel: bool = False
    #: A ``RulesService.Pipeline`` message: sent on a stream of its own, and answered by the
    #: status of its one call (or of the stream, when the message itself is refused).
    pipelined: bool = False

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.method}"


@dataclass
class Material:
    """What generators build from: the live tables and real rules states."""

    scene: Scene
    states: list[RealState]
    signing_key: str
    rng: random.Random


def table_call(
    kind: str,
    method: str,
    message: Message | bytes,
    metadata: Metadata = (),
    *,
    own_channel: bool = False,
) -> HostileRequest:
    """A call to the table service (``WatchTable`` and ``WatchTurns`` answer with streams)."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return HostileRequest(
        kind,
        TABLE_SERVICE,
        method,
        payload,
        metadata,
        streaming=method in ("WatchTable", "WatchTurns"),
        own_channel=own_channel,
    )


def rules_call(
    kind: str, method: str, message: Message | bytes, *, own_channel: bool = False
) -> HostileRequest:
    """A call to the rules service."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return HostileRequest(
        kind,
        RULES_SERVICE,
        method,
        payload,
        own_channel=own_channel,
        pipelined=method == "Pipeline",
    )


#: The rules methods a pipeline carries, by their field in ``PipelinedCall``.
PIPELINED_FIELDS = {
    "Deal": "deal",
    "ApplyAction": "apply_action",
    "LegalActions": "legal_actions",
    "GetView": "get_view",
}


def sometimes_pipelined(request: HostileRequest, rng: random.Random) -> HostileRequest:
    """Half of the rules calls a pipeline can carry go through ``Pipeline`` instead, as the
    table service sends them: the same request inside a ``PipelinedCall``."""
    field = PIPELINED_FIELDS.get(request.method)
    if field is None or request.service != RULES_SERVICE or rng.random() < 0.5:
        return request
    call = rules_pb2.PipelinedCall(id=rng.randrange(1, 2**64))
    # The request's bytes are kept as they are, whatever they hold: merged into the field.
    getattr(call, field).MergeFromString(request.payload)
    pipelined = rules_pb2.PipelineRequest(calls=[call])
    return rules_call(request.kind, "Pipeline", pipelined, own_channel=request.own_channel)
