"""A hostile request as it goes on the wire, and what generators build requests from.

Requests are kept as bytes and sent through a generic channel call, so garbage that no
message could hold travels exactly like a well-formed message would, inside a ``Pipeline``
message too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from google.protobuf.message import Message

from cardtable.platform.protobuf_wire import length_delimited
from cardtable_api.rules.v1 import rules_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.hostile.rules_states import RealState
from cardtable_tools.hostile.scene import Scene

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
    #: A ``Pipeline`` message (of either service): sent on a stream of its own, and answered
    #: by the status of its one call (or of the stream, when the message itself is refused).
    pipelined: bool = False

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.method}"

    @property
    def label(self) -> str:
        """``TableService.MakeMove``: the method as a report counts it (both services have a
        ``Pipeline``, and a run must show that each was reached)."""
        return f"{self.service.rpartition('.')[2]}.{self.method}"


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
    """A call to the table service (``WatchTable`` and ``WatchTurns`` answer with streams,
    ``Pipeline`` is a stream both ways)."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return HostileRequest(
        kind,
        TABLE_SERVICE,
        method,
        payload,
        metadata,
        streaming=method in ("WatchTable", "WatchTurns"),
        own_channel=own_channel,
        pipelined=method == "Pipeline",
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


#: The methods each service's ``Pipeline`` carries, by their field in its ``PipelinedCall``.
PIPELINED_FIELDS: dict[str, dict[str, str]] = {
    RULES_SERVICE: {
        "Deal": "deal",
        "ApplyAction": "apply_action",
        "LegalActions": "legal_actions",
        "GetView": "get_view",
    },
    TABLE_SERVICE: {
        "CreateTable": "create_table",
        "JoinTable": "join_table",
        "GetTable": "get_table",
        "MakeMove": "make_move",
    },
}
#: Of the pipelined table calls whose caller has a token, the share that leaves it in the
#: stream's ``authorization`` metadata with an empty call token: the fallback is tried too.
STREAM_TOKEN_SHARE = 0.25
#: ``PipelineRequest.calls``, the same field number in both services' pipelines.
PIPELINE_CALLS_FIELD = 1


def sometimes_pipelined(request: HostileRequest, rng: random.Random) -> HostileRequest:
    """Half of the calls a pipeline can carry go through their service's ``Pipeline`` instead,
    as a backend serving many players sends them: the same request inside one
    ``PipelinedCall``, so the answers its kind allows are the same."""
    field = PIPELINED_FIELDS.get(request.service, {}).get(request.method)
    if field is None or rng.random() < 0.5:
        return request
    call_id = rng.randrange(1, 2**64)
    if request.service == RULES_SERVICE:
        message = _pipeline_message(rules_pb2.PipelinedCall(id=call_id), field, request.payload)
        return rules_call(request.kind, "Pipeline", message, own_channel=request.own_channel)
    token, metadata = _call_token(request.metadata, rng)
    call = table_pb2.PipelinedCall(id=call_id, token=token)
    message = _pipeline_message(call, field, request.payload)
    return table_call(request.kind, "Pipeline", message, metadata, own_channel=request.own_channel)


def _call_token(metadata: Metadata, rng: random.Random) -> tuple[str, Metadata]:
    """The call's token and the stream's metadata for a table call sent with ``metadata``.

    A well-formed bearer token moves into the call (but now and then stays on the stream,
    for the call to fall back to). Anything else has no call-token equivalent, since the
    service puts ``Bearer`` before a call's token itself, so it stays on the stream.
    """
    token = _bearer_token(metadata)
    if token is None or rng.random() < STREAM_TOKEN_SHARE:
        return "", metadata
    return token, ()


def _bearer_token(metadata: Metadata) -> str | None:
    """The token when ``metadata`` is exactly ``authorization: Bearer <token>``, else None."""
    if len(metadata) != 1 or metadata[0][0] != "authorization":
        return None
    scheme, _, token = metadata[0][1].partition(" ")
    # one word (not empty, no space): then the service's "Bearer " + token is this header
    return token if scheme == "Bearer" and token.split() == [token] else None


def _pipeline_message(call: Message, field: str, payload: bytes) -> bytes:
    """A ``PipelineRequest`` holding ``call`` with ``payload`` as its ``field``, byte for byte.

    The payload is not decoded, so undecodable bytes stay undecodable inside the message;
    a well-formed one reads back exactly as if it had been set on the field.
    """
    number = call.DESCRIPTOR.fields_by_name[field].number
    call_bytes = call.SerializeToString() + length_delimited(number, payload)
    return length_delimited(PIPELINE_CALLS_FIELD, call_bytes)
