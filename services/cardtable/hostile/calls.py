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
    #: WatchTable answers with a stream: the first message or the error is read.
    streaming: bool = False
    #: Megabyte payloads go on a channel of their own, so a connection the server
    #: closes over one cannot fail the calls that follow.
    own_channel: bool = False

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
    """A call to the table service (``WatchTable`` is its one streaming method)."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return HostileRequest(
        kind,
        TABLE_SERVICE,
        method,
        payload,
        metadata,
        streaming=method == "WatchTable",
        own_channel=own_channel,
    )


def rules_call(
    kind: str, method: str, message: Message | bytes, *, own_channel: bool = False
) -> HostileRequest:
    """A call to the rules service."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return HostileRequest(kind, RULES_SERVICE, method, payload, own_channel=own_channel)
