"""Messages from the event log, decoded and checked before anything is projected.

A message the projection cannot use raises :class:`PoisonMessageError` with a reason an operator
can act on; the writer puts it in the dead-letter table and goes on with the rest of the log.
docs/events.md "Versions": fields are only ever added and readers ignore the ones they do not
know, but a batch with a schema version newer than ours is set aside, never guessed at.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import NamedTuple

from google.protobuf.message import DecodeError

from cardtable.platform.log_names import LogNames
from cardtable_api.events.v1 import events_pb2

SCHEMA_HEADER = "Cardtable-Schema"
#: The newest ``EventBatch.schema_version`` this reader understands.
KNOWN_SCHEMA_VERSION = 1


class PoisonMessageError(Exception):
    """This message cannot be projected; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StoredMessage(NamedTuple):
    """One message as the stream stored it, whichever way it was read.

    A named tuple, not a dataclass: a rebuild makes one per message of the log, and a tuple
    is built several times faster than a frozen dataclass.
    """

    sequence: int
    subject: str
    data: bytes
    headers: Mapping[str, str]
    # When the stream stored it; the fallback time for a batch without ``occurred_at``.
    stored_at: datetime


def stored_at_from_nanoseconds(nanoseconds: int) -> datetime:
    """When the stream stored a message, from nanoseconds since the epoch: the one rounding to
    microseconds of every way of reading the log (nats-py's own for a delivery), so a live
    projection and one rebuilt agree to the microsecond."""
    return datetime.fromtimestamp(nanoseconds / 1_000_000_000.0, UTC)


def nanoseconds_from_rfc3339(text: str) -> int:
    """``2026-12-02T20:37:35.405861234Z`` (JetStream's form) as nanoseconds since the epoch."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    seconds = int(datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp())
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0")[:9] or 0)


class DecodedBatch:
    """A stored message that passed every check (a plain class: one is made per message)."""

    __slots__ = ("_occurred_at", "batch", "headers", "payload", "sequence", "stored_at", "table_id")

    def __init__(
        self,
        sequence: int,
        table_id: str,
        batch: events_pb2.EventBatch,
        stored_at: datetime,
        payload: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.sequence = sequence
        self.table_id = table_id
        self.batch = batch
        self.stored_at = stored_at
        #: The stored bytes and headers, which the batch's signature is checked against.
        self.payload = payload
        self.headers = headers or {}
        self._occurred_at: datetime | None = None

    @property
    def occurred_at(self) -> datetime:
        """When its events happened (read only for the few batches that need a time)."""
        if self._occurred_at is None:
            if self.batch.HasField("occurred_at"):
                self._occurred_at = self.batch.occurred_at.ToDatetime(tzinfo=UTC)
            else:
                self._occurred_at = self.stored_at
        return self._occurred_at


def decode(message: StoredMessage, log: LogNames) -> DecodedBatch:
    """Parse and check one message; raises :class:`PoisonMessageError` when it is unusable."""
    header = message.headers.get(SCHEMA_HEADER)
    if header is not None and header.strip() != str(KNOWN_SCHEMA_VERSION):
        raise PoisonMessageError(
            f"{SCHEMA_HEADER} header {header!r}: this reader knows schema version "
            f"{KNOWN_SCHEMA_VERSION} only"
        )
    batch = events_pb2.EventBatch()
    try:
        batch.ParseFromString(message.data)
    except DecodeError as error:
        raise PoisonMessageError(f"not an EventBatch: {error}") from None
    if batch.schema_version > KNOWN_SCHEMA_VERSION:
        raise PoisonMessageError(
            f"schema version {batch.schema_version} is newer than this reader "
            f"(version {KNOWN_SCHEMA_VERSION})"
        )
    if batch.schema_version < 1:
        raise PoisonMessageError("the batch has no schema version")
    table_id = log.table_id_of(message.subject)
    if table_id is None:
        raise PoisonMessageError(f"subject {message.subject!r} is not a table subject")
    if batch.table_id != table_id:
        raise PoisonMessageError(
            f"the batch is for table {batch.table_id!r}, its subject for {table_id!r}"
        )
    if batch.table_version < 1:
        raise PoisonMessageError("the batch has no table version")
    return DecodedBatch(
        sequence=message.sequence,
        table_id=table_id,
        batch=batch,
        stored_at=message.stored_at,
        payload=message.data,
        headers=message.headers,
    )
