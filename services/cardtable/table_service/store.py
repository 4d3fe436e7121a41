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

import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import nats.errors
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BadRequestError, NotFoundError

from cardtable.platform.logging import get_logger
from cardtable.platform.tracing import outgoing_headers
from cardtable_api.events.v1 import events_pb2

_log = get_logger(__name__)

SCHEMA_VERSION = 1
WRONG_LAST_SEQUENCE = 10071
#: "stream configuration update can not change RePublish" (NATS before 2.10).
STREAM_CONFIG_INVALID = 10052
STREAM_NOT_FOUND = 10059
MESSAGE_NOT_FOUND = 10037
DUPLICATE_WINDOW_SECONDS = 120
#: The header of a republished message that holds its stream sequence.
SEQUENCE_HEADER = "Nats-Sequence"


class AppendConflictError(Exception):
    """The subject moved on since the expected sequence: reload and decide again."""


@dataclass(frozen=True)
class StoredBatch:
    batch: events_pb2.EventBatch
    sequence: int


@dataclass(frozen=True)
class AppendResult:
    sequence: int
    #: True when NATS recognised the command id: the batch was stored by an earlier try.
    duplicate: bool


#: The appending process's random id (``EventStore.origin``); not part of the event data.
ORIGIN_HEADER = "Cardtable-Origin"


class EventStore:
    """Reads and appends a table's batches."""

    def __init__(self, jetstream: JetStreamContext, stream: str, subject_prefix: str) -> None:
        self._js = jetstream
        self.stream = stream
        self.subject_prefix = subject_prefix
        #: Sent with every append, so this process can tell its own messages on a subject.
        self.origin = uuid.uuid4().hex
        #: Whether live messages are stored batches (the stream republishes; see the module
        #: doc). False until :meth:`ensure_stream` has seen the stream's configuration.
        self.republishes = False

    def subject(self, table_id: str) -> str:
        return f"{self.subject_prefix}.table.{table_id}"

    @property
    def _republish(self) -> api.RePublish:
        # NATS 2.9 accepts only a full-wildcard source here, so the stored subject keeps the
        # original one whole after the prefix.
        return api.RePublish(src=">", dest=f"{self.subject_prefix}.stored.>")

    def stored_subject(self, table_id: str) -> str:
        """Where a table's batches are republished once stored."""
        return f"{self.subject_prefix}.stored.{self.subject(table_id)}"

    def live_subject(self, table_id: str) -> str:
        """Where to follow a table live: the stored batches, or hints when not republished."""
        return self.stored_subject(table_id) if self.republishes else self.subject(table_id)

    async def ensure_stream(self, replicas: int = 1) -> None:
        """Create the stream if missing (file storage, no deletes, no purges), and make an
        existing one republish its stored messages (streams made before it did)."""
        config = api.StreamConfig(
            name=self.stream,
            subjects=[f"{self.subject_prefix}.table.*"],
            storage=api.StorageType.FILE,
            retention=api.RetentionPolicy.LIMITS,
            deny_delete=True,
            deny_purge=True,
            duplicate_window=DUPLICATE_WINDOW_SECONDS,
            num_replicas=replicas,
            allow_direct=True,
            republish=self._republish,
        )
        try:
            info = await self._js.stream_info(self.stream)
        except NotFoundError:
            with contextlib.suppress(BadRequestError):  # another replica created it first
                await self._js.add_stream(config)
            info = await self._js.stream_info(self.stream)
        wanted = self._republish
        have = info.config.republish
        if have is not None and (have.src, have.dest) == (wanted.src, wanted.dest):
            self.republishes = True
            return
        info.config.republish = wanted
        try:
            await self._js.update_stream(info.config)
        except APIError as error:
            if error.err_code != STREAM_CONFIG_INVALID:
                raise
            _log.warning(
                "the event stream cannot republish on this NATS server (before 2.10): live "
                "followers read the log on every change; upgrade NATS to lift this",
                extra={"stream": self.stream, "error": str(error.description)},
            )
            return
        self.republishes = True

    async def append(
        self,
        table_id: str,
        batch: events_pb2.EventBatch,
        expected_sequence: int,
        timeout_seconds: float = 5.0,
    ) -> AppendResult:
        """Append ``batch`` if the subject's last sequence is still ``expected_sequence``."""
        headers = {
            # NATS de-duplicates by message id across the whole stream: scope it to the table.
            "Nats-Msg-Id": f"{table_id}:{batch.command_id}",
            "Nats-Expected-Last-Subject-Sequence": str(expected_sequence),
            "Cardtable-Schema": str(SCHEMA_VERSION),
            ORIGIN_HEADER: self.origin,
            # the move's trace context travels with its events to every projection
            **outgoing_headers(),
        }
        payload = batch.SerializeToString()
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
            return await self._resolve_unclear(table_id, batch.command_id)
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
    batch = events_pb2.EventBatch()
    batch.ParseFromString(message.data or b"")
    assert message.seq is not None
    return StoredBatch(batch=batch, sequence=message.seq)
