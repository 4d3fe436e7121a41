"""The event store: one JetStream stream for all tables, one subject per table.

Appends use ``Nats-Expected-Last-Subject-Sequence`` so two commands on one table can never
both succeed (optimistic concurrency), and ``Nats-Msg-Id`` (the client's command id) so a
retried command is stored once. After an unclear outcome (a timeout, a lost ack) the store
reads the subject's last message to tell "already applied" from "someone else got there".

Live followers (``WatchTable``, turn watchers) subscribe to the stream's *republished* copy of
a table's subject, never to the subject itself: a core subscriber on the subject also receives
the appends JetStream refused (the loser of a conflict), which are not events at all. The
stream republishes a message only once it is stored, with its stream sequence in the
``Nats-Sequence`` header. A stream made before this, on a NATS server older than 2.10, cannot
be given republishing; followers then take the subject's messages as hints and read the log.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import nats.errors
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, NotFoundError

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import SIGNATURE_HEADER
from cardtable.platform.log_streams import ensure_events_stream
from cardtable.platform.logging import get_logger
from cardtable.platform.tracing import outgoing_headers
from cardtable_api.events.v1 import events_pb2

_log = get_logger(__name__)

SCHEMA_VERSION = 1
WRONG_LAST_SEQUENCE = 10071
STREAM_NOT_FOUND = 10059
MESSAGE_NOT_FOUND = 10037
#: The header of a republished message that holds its stream sequence.
SEQUENCE_HEADER = "Nats-Sequence"


class StreamMissingError(RuntimeError):
    """The events stream is not there, and this process may not create it."""


class AppendConflictError(Exception):
    """The subject moved on since the expected sequence: reload and decide again."""


@dataclass(frozen=True)
class StoredBatch:
    """A batch as the stream holds it: parsed, and the bytes and headers it was stored with
    (what its signature and the next batch's chain link are checked against)."""

    batch: events_pb2.EventBatch
    sequence: int
    payload: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AppendResult:
    sequence: int
    #: True when NATS recognised the command id: the batch was stored by an earlier try.
    duplicate: bool


#: The appending process's random id (``EventStore.origin``); not part of the event data.
ORIGIN_HEADER = "Cardtable-Origin"


class EventStore:
    """Reads and appends a table's batches."""

    def __init__(self, jetstream: JetStreamContext, names: LogNames) -> None:
        self._js = jetstream
        self.names = names
        self.stream = names.stream
        #: Sent with every append, so this process can tell its own messages on a subject.
        self.origin = uuid.uuid4().hex
        #: Whether live messages are stored batches (the stream republishes; see the module
        #: doc). False until :meth:`ensure_stream` has seen the stream's configuration.
        self.republishes = False
        #: The first stream sequence whose batches must be signed (platform/log_signing.py).
        self.signed_from_sequence = 1

    def subject(self, table_id: str) -> str:
        return self.names.table_subject(table_id)

    def stored_subject(self, table_id: str) -> str:
        """Where a table's batches are republished once stored."""
        return self.names.stored_subject(table_id)

    def live_subject(self, table_id: str) -> str:
        """Where to follow a table live: the stored batches, or hints when not republished."""
        return self.stored_subject(table_id) if self.republishes else self.subject(table_id)

    async def ensure_stream(self, replicas: int = 1) -> None:
        """Check the stream (platform/log_streams.py), creating it where this user may.

        Under NATS authorization only the provisioner may create or change streams: a stream
        that is missing then stops the service with a sentence naming what to run.
        """
        try:
            stream = await ensure_events_stream(self._js, self.names, replicas)
        except (TimeoutError, nats.errors.TimeoutError):
            raise StreamMissingError(
                f"the events stream {self.stream} is missing or not as provisioned, and this "
                "NATS user may not create or change it: run cardtable-provision with the "
                "provisioner's credentials first"
            ) from None
        self.republishes = stream.republishes
        self.signed_from_sequence = stream.signed_from_sequence

    async def append(
        self,
        table_id: str,
        command_id: str,
        payload: bytes,
        expected_sequence: int,
        signature: str = "",
        timeout_seconds: float = 2.0,
    ) -> AppendResult:
        """Append a serialized batch if the subject's last sequence is still
        ``expected_sequence``, with its signature header (platform/log_signing.py).

        An append is acknowledged in milliseconds; one unanswered after ``timeout_seconds``
        went to a stream leader that is gone, and its retry must reach the one a cluster elects
        next without first waiting out a long timeout: each wait adds to a move's outage.
        """
        headers = {
            # NATS de-duplicates by message id across the whole stream: scope it to the table.
            "Nats-Msg-Id": f"{table_id}:{command_id}",
            "Nats-Expected-Last-Subject-Sequence": str(expected_sequence),
            "Cardtable-Schema": str(SCHEMA_VERSION),
            ORIGIN_HEADER: self.origin,
            # the move's trace context travels with its events to every projection
            **outgoing_headers(),
        }
        if signature:
            headers[SIGNATURE_HEADER] = signature
        try:
            ack = await self._js.publish(
                self.subject(table_id),
                payload,
                timeout=timeout_seconds,
                stream=self.stream,
                headers=headers,
            )
        except APIError as error:
            if error.err_code == WRONG_LAST_SEQUENCE:
                raise AppendConflictError(str(error.description)) from None
            raise
        except (TimeoutError, nats.errors.TimeoutError):
            return await self._resolve_unclear(table_id, command_id)
        return AppendResult(sequence=ack.seq, duplicate=bool(ack.duplicate))

    async def _resolve_unclear(self, table_id: str, command_id: str) -> AppendResult:
        """After a lost ack: was it our batch that landed, or someone else's (or nothing)?"""
        last = await self.last(table_id)
        if last is not None and last.batch.command_id == command_id:
            return AppendResult(sequence=last.sequence, duplicate=True)
        raise AppendConflictError("the append's outcome was unclear and it is not in the log")

    async def last(self, table_id: str) -> StoredBatch | None:
        """The subject's last batch, or None for an unknown table."""
        try:
            message = await self._js.get_last_msg(self.stream, self.subject(table_id))
        except NotFoundError:
            return None
        return _stored(message)

    async def read(self, table_id: str, after_sequence: int = 0) -> AsyncIterator[StoredBatch]:
        """The table's batches after ``after_sequence``, in order."""
        sequence = after_sequence
        subject = self.subject(table_id)
        while True:
            try:
                message = await self._js.get_msg(
                    self.stream, seq=sequence + 1, subject=subject, next=True
                )
            except NotFoundError:
                return
            stored = _stored(message)
            yield stored
            sequence = stored.sequence


def _stored(message: api.RawStreamMsg) -> StoredBatch:
    payload = message.data or b""
    batch = events_pb2.EventBatch()
    batch.ParseFromString(payload)
    assert message.seq is not None
    return StoredBatch(
        batch=batch, sequence=message.seq, payload=payload, headers=message.headers or {}
    )
