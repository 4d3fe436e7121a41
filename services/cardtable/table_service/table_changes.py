"""Waking whoever waits on a table (``WatchTurns`` streams) when the table changes.

A stream waits on an event instead of polling. This replica's own appends wake it at once:
the application tells :class:`TableChanges` after each append. Appends made by another
replica arrive through one core NATS subscription per watched table, on the subject where the
stream republishes the table's stored batches (not the table's own subject, whose subscribers
also get refused appends), however many streams watch it. The hub only knows "table T is at
version V or later"; each stream then reads the table itself (from the cache, or caught up
from the log when the cache is behind V) and decides whether its seat is to act.

A message that this process appended itself (its ``Cardtable-Origin`` header) is skipped:
the application has said so already, and the message may even arrive before the append's
acknowledgement, when the cache does not hold it yet. A core message can be lost (a slow
subscriber), so a watcher still treats silence as "nothing known", not "nothing happened".

On a stream that does not republish (see the store's doc) the table's own subject is followed
instead, and its messages may be refused appends: their versions are hints that can run ahead
of the log, so every such message wakes the watchers, news or not, and they catch up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import nats.errors
from google.protobuf.message import DecodeError
from nats.aio.client import Client as NatsClient

from cardtable.eventlog.store import ORIGIN_HEADER, EventStore
from cardtable.platform.logging import get_logger
from cardtable.table_service.commands import Table
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable_api.events.v1 import events_pb2

_log = get_logger(__name__)


class TableChanges:
    """Events to wait on per watched table, set when its version moves on."""

    def __init__(self, nats: NatsClient | None, store: EventStore) -> None:
        self._nats = nats
        self._store = store
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._latest: dict[str, int] = {}
        self._subscriptions: dict[str, Any] = {}

    def latest(self, table_id: str) -> int:
        """The highest version this replica has heard of for a watched table (0: none)."""
        return self._latest.get(table_id, 0)

    def appended(self, table: Table) -> None:
        """This replica appended to ``table``: a listener of the application."""
        self.changed(table.state.table_id, table.state.version)

    def changed(self, table_id: str, version: int, *, hint: bool = False) -> None:
        """``table_id`` is at ``version`` or later: wake its watchers if that is news.

        A ``hint`` (a message that may be a refused append) wakes them whatever its version.
        """
        waiting = self._waiting.get(table_id)
        latest = self._latest.get(table_id, 0)
        if not waiting or (version <= latest and not hint):
            return
        self._latest[table_id] = max(version, latest)
        for event in waiting:
            event.set()

    @contextlib.asynccontextmanager
    async def watching(self, table_id: str) -> AsyncIterator[asyncio.Event]:
        """An event set whenever ``table_id`` changes, for as long as the block runs."""
        event = asyncio.Event()
        waiting = self._waiting.setdefault(table_id, set())
        first = not waiting
        waiting.add(event)
        try:
            if first and self._nats is not None:
                try:
                    self._subscriptions[table_id] = await self._nats.subscribe(
                        self._store.live_subject(table_id), cb=self._receiver(table_id)
                    )
                except nats.errors.Error as error:
                    raise DependencyUnavailableError(f"event store: {error!r}") from None
            yield event
        finally:
            waiting.discard(event)
            if not waiting:
                self._waiting.pop(table_id, None)
                self._latest.pop(table_id, None)
                subscription = self._subscriptions.pop(table_id, None)
                if subscription is not None:
                    with contextlib.suppress(Exception):
                        await subscription.unsubscribe()

    def _receiver(self, table_id: str) -> Callable[[Any], Any]:
        async def receive(message: Any) -> None:
            if (message.headers or {}).get(ORIGIN_HEADER) == self._store.origin:
                return  # our own append: announced by the application, maybe not yet cached
            try:
                version = events_pb2.EventBatch.FromString(message.data).table_version
            except DecodeError:
                _log.warning("unreadable message on a table subject", extra={"table_id": table_id})
                return
            self.changed(table_id, version, hint=not self._store.republishes)

        return receive
