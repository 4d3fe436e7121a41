"""Following a table live: the one way this replica learns that a table changed.

Two kinds of stream follow a table. ``WatchTurns`` streams wait on an event instead of polling
(:meth:`TableChanges.watching`), and ``WatchTable`` streams receive each batch as it lands
(:meth:`TableChanges.following`). Both are served by one core NATS subscription per followed
table on this replica, however many streams follow it, on the subject where the stream
republishes the table's stored batches (not the table's own subject, whose subscribers also
get refused appends). Each message is decoded once, for all of them.

A waiter only learns "table T is at version V or later"; it then reads the table itself (from
the cache, or caught up from the log when the cache is behind V). This replica's own appends
wake it at once: the application tells :class:`TableChanges` after each append. A message that
this process appended itself (its ``Cardtable-Origin`` header) therefore wakes no waiter: the
application has said so already, and the message may even arrive before the append's
acknowledgement, when the cache does not hold it yet. A follower receives every message,
this replica's own appends too, with the stream sequence it was stored at: it sends the batch
itself, and reads the log only when it sees a gap. A core message can be lost (a slow
subscriber), so both treat silence as "nothing known", not "nothing happened".

On a stream that does not republish (see the store's doc) the table's own subject is followed
instead, and its messages may be refused appends: their versions are hints that can run ahead
of the log, so every such message wakes the waiters, news or not, and they catch up; a
follower reads the log for what was stored (``EventStore.republishes`` says which).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import nats.errors
from google.protobuf.message import DecodeError
from nats.aio.client import Client as NatsClient

from cardtable.eventlog.store import ORIGIN_HEADER, SEQUENCE_HEADER, EventStore
from cardtable.platform.logging import get_logger
from cardtable.table_service.commands import Table
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable_api.events.v1 import events_pb2

_log = get_logger(__name__)

#: A batch as a live message brought it, with the stream sequence it was stored at (0 when the
#: message did not say: a stream that does not republish).
LiveBatch = tuple[events_pb2.EventBatch, int]


@dataclass
class _Followed:
    """Who follows one table on this replica, and the subscription that serves them all."""

    waiting: set[asyncio.Event] = field(default_factory=set)
    following: set[asyncio.Queue[LiveBatch]] = field(default_factory=set)
    #: The highest version the waiters have been told of.
    latest: int = 0
    #: The subscription being made or made: every stream that joins waits for it, so none
    #: starts reading the log before the messages after that read are sure to reach it.
    subscribing: asyncio.Future[Any] | None = None
    streams: int = 0


class TableChanges:
    """The followed tables of this replica, each with its one subscription."""

    def __init__(self, nats: NatsClient | None, store: EventStore) -> None:
        """Without ``nats`` only this replica's own appends are heard of (waiters only)."""
        self._nats = nats
        self._store = store
        self._tables: dict[str, _Followed] = {}

    @property
    def live(self) -> bool:
        """Whether followers receive batches (there is a NATS connection to hear them on)."""
        return self._nats is not None

    def latest(self, table_id: str) -> int:
        """The highest version this replica has heard of for a watched table (0: none)."""
        followed = self._tables.get(table_id)
        return followed.latest if followed is not None else 0

    def appended(self, table: Table) -> None:
        """This replica appended to ``table``: a listener of the application."""
        self.changed(table.state.table_id, table.state.version)

    def changed(self, table_id: str, version: int, *, hint: bool = False) -> None:
        """``table_id`` is at ``version`` or later: wake its waiters if that is news.

        A ``hint`` (a message that may be a refused append) wakes them whatever its version.
        """
        followed = self._tables.get(table_id)
        if followed is None or not followed.waiting:
            return
        if version <= followed.latest and not hint:
            return
        followed.latest = max(version, followed.latest)
        for event in followed.waiting:
            event.set()

    @contextlib.asynccontextmanager
    async def watching(self, table_id: str) -> AsyncIterator[asyncio.Event]:
        """An event set whenever ``table_id`` changes, for as long as the block runs."""
        event = asyncio.Event()
        async with self._joined(table_id) as followed:
            followed.waiting.add(event)
            try:
                yield event
            finally:
                followed.waiting.discard(event)
                if not followed.waiting:
                    followed.latest = 0

    @contextlib.asynccontextmanager
    async def following(self, table_id: str) -> AsyncIterator[asyncio.Queue[LiveBatch]]:
        """Each batch a live message brings from now on, for as long as the block runs: read
        the log for what came before only inside the block, and nothing falls between."""
        arrivals: asyncio.Queue[LiveBatch] = asyncio.Queue()
        async with self._joined(table_id) as followed:
            followed.following.add(arrivals)
            try:
                yield arrivals
            finally:
                followed.following.discard(arrivals)

    @contextlib.asynccontextmanager
    async def _joined(self, table_id: str) -> AsyncIterator[_Followed]:
        """The table's followers with one stream more, subscribed while any stream is."""
        followed = self._tables.setdefault(table_id, _Followed())
        followed.streams += 1
        try:
            if self._nats is not None:
                if followed.subscribing is None:
                    followed.subscribing = asyncio.ensure_future(
                        self._nats.subscribe(
                            self._store.live_subject(table_id),
                            cb=self._receiver(table_id, followed),
                        )
                    )
                try:
                    await asyncio.shield(followed.subscribing)
                except nats.errors.Error as error:
                    raise DependencyUnavailableError(f"event store: {error!r}") from None
            yield followed
        finally:
            followed.streams -= 1
            if not followed.streams:
                del self._tables[table_id]
                if followed.subscribing is not None:
                    await _unsubscribe(followed.subscribing)

    def _receiver(self, table_id: str, followed: _Followed) -> Callable[[Any], Any]:
        async def receive(message: Any) -> None:
            headers = message.headers or {}
            try:
                batch = events_pb2.EventBatch.FromString(message.data)
            except DecodeError:
                _log.warning("unreadable message on a table subject", extra={"table_id": table_id})
                return
            sequence = headers.get(SEQUENCE_HEADER, "0")
            for arrivals in followed.following:
                arrivals.put_nowait((batch, int(sequence) if sequence.isdigit() else 0))
            if headers.get(ORIGIN_HEADER) == self._store.origin:
                return  # our own append: announced by the application, maybe not yet cached
            if followed is self._tables.get(table_id):  # not a subscription being ended
                self.changed(table_id, batch.table_version, hint=not self._store.republishes)

        return receive


async def _unsubscribe(subscribing: asyncio.Future[Any]) -> None:
    """End a subscription once it is made (a failed one has nothing to end)."""
    with contextlib.suppress(Exception):
        subscription = await asyncio.shield(subscribing)
        await subscription.unsubscribe()
