"""The lobby index: a summary of every table in a JetStream key-value bucket.

Listing tables, quick seating and finding running tables after a restart all need to know
about tables this replica has never loaded. Each replica writes a table's summary after every
append and watches the bucket, so every replica holds the same in-memory index. The index is
derived data: the log stays the truth, and a summary that lags (a crash between the append
and the put) is corrected by the table's next command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from cardtable.platform.logging import get_logger

_log = get_logger(__name__)


@dataclass(frozen=True)
class TableSummary:
    table_id: str
    game: str
    seats: int
    seats_taken: int
    status: str
    options: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    #: Seconds after creation at which empty seats are filled with computer players; 0: never.
    fill_at: float = 0.0
    #: Seats a computer player holds now; None in an entry written before the field existed.
    bot_seats: int | None = None

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> TableSummary:
        values: dict[str, Any] = json.loads(data)
        return cls(**values)


class LobbyIndex:
    """The in-memory copy of the bucket, kept current by a watcher task."""

    def __init__(self, jetstream: JetStreamContext, bucket: str) -> None:
        self._js = jetstream
        self._bucket_name = bucket
        self._bucket: KeyValue | None = None
        self._tables: dict[str, TableSummary] = {}
        #: The same summaries by status, kept as they change: the timers look at open and
        #: running tables many times a second, and finished ones only ever accumulate.
        self._by_status: dict[str, dict[str, TableSummary]] = {}
        self._watcher_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        try:
            self._bucket = await self._js.key_value(self._bucket_name)
        except BucketNotFoundError:
            self._bucket = await self._js.create_key_value(bucket=self._bucket_name, history=1)
        self._watcher_task = asyncio.create_task(self._watch(), name="lobby-index-watch")
        await asyncio.wait_for(self._ready.wait(), timeout=30)

    async def stop(self) -> None:
        if self._watcher_task is not None:
            self._watcher_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher_task

    async def _watch(self) -> None:
        assert self._bucket is not None
        watcher = await self._bucket.watchall()
        try:
            async for entry in watcher:
                if entry is None:  # the initial values are all delivered
                    self._ready.set()
                    continue
                if entry.value and entry.operation is None:
                    try:
                        self._store(TableSummary.from_json(entry.value))
                    except (ValueError, TypeError) as error:
                        _log.warning(
                            "unreadable lobby entry", extra={"key": entry.key, "error": str(error)}
                        )
                else:
                    self._drop(entry.key)
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[no-untyped-call]

    async def put(self, summary: TableSummary) -> None:
        """Publish a table's summary; failures are logged, never fatal (the log is the truth).

        Most moves change nothing a lobby shows (status and seats are what it needs), so an
        unchanged summary is not written again.
        """
        if self._tables.get(summary.table_id) == summary:
            return
        self._store(summary)
        if self._bucket is None:
            return
        try:
            await self._bucket.put(summary.table_id, summary.to_json())
        except Exception as error:
            _log.warning(
                "lobby index put failed", extra={"table_id": summary.table_id, "error": repr(error)}
            )

    def _store(self, summary: TableSummary) -> None:
        self._drop(summary.table_id)
        self._tables[summary.table_id] = summary
        self._by_status.setdefault(summary.status, {})[summary.table_id] = summary

    def _drop(self, table_id: str) -> None:
        old = self._tables.pop(table_id, None)
        if old is not None:
            self._by_status.get(old.status, {}).pop(table_id, None)

    def tables(self, *statuses: str) -> list[TableSummary]:
        """The summaries, oldest first; only those with one of ``statuses`` when given (that
        costs what those tables count, not what every table ever served counts)."""
        chosen = (
            [summary for status in statuses for summary in self._by_status.get(status, {}).values()]
            if statuses
            else list(self._tables.values())
        )
        return sorted(chosen, key=lambda summary: (summary.created_at, summary.table_id))

    def with_status(self, status: str) -> Iterable[TableSummary]:
        """The summaries with ``status``, in no order: a live view, not to change while read."""
        return self._by_status.get(status, {}).values()

    def get(self, table_id: str) -> TableSummary | None:
        return self._tables.get(table_id)
