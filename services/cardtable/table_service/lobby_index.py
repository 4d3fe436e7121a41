"""The lobby index: a summary of every table in a JetStream key-value bucket.

Listing tables, quick seating and finding running tables after a restart all need to know
about tables this replica has never loaded. Each replica writes a table's summary after every
append and watches the bucket, so every replica holds the same in-memory index. The index is
derived data: the log stays the truth, and a summary that lags (a crash between the append
and the put) is corrected by the table's next command.

Finished tables leave the lobby once their retention has passed (a day by default,
``LOBBY_FINISHED_RETENTION_SECONDS``). Otherwise the bucket, and every replica's memory and
start-up time with it, would grow with every game ever played. The game itself stays in the
log: its table, record and history can still be fetched by id, and the scoring service keeps
its results. Each replica sweeps on its own: expiry depends only on the summary, so all
replicas drop the same tables. The key's messages are purged from the bucket rather than
deleted, which would leave a marker per key for every later start-up to read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from cardtable.platform.logging import get_logger
from cardtable.platform.rated_tables import RATED_WHEN_UNRECORDED
from cardtable.table_service.state import FINISHED

_log = get_logger(__name__)

#: How long a finished table stays listed: a day of recent results.
DEFAULT_FINISHED_RETENTION_SECONDS = 86_400.0
#: How often each replica looks for finished tables past their retention.
SWEEP_INTERVAL_SECONDS = 60.0
#: How long a start-up waits for the bucket's last message once the client says it sent all.
LOAD_GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class TableSummary:
    table_id: str
    game: str
    seats: int
    seats_taken: int
    status: str
    options: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    #: When the game ended; 0 while it runs, and in entries written before the field existed.
    finished_at: float = 0.0
    #: Seconds after creation at which empty seats are filled with computer players; 0: never.
    fill_at: float = 0.0
    #: Seats a computer player holds now; None in an entry written before the field existed.
    bot_seats: int | None = None
    #: Whether its game moves ratings; an entry written before the field existed is of a
    #: table whose log predates it too, and reads as that log does.
    rated: bool = RATED_WHEN_UNRECORDED
    #: Who created it ("" in entries written before the field existed): open tables count
    #: against their creator's quota.
    created_by: str = ""
    #: The people seated now (computer players left out): each seat counts against its
    #: player's quota of seats. Empty in entries written before the field existed.
    people: tuple[str, ...] = ()

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> TableSummary:
        values: dict[str, Any] = json.loads(data)
        if "people" in values:
            values["people"] = tuple(values["people"])
        # A field a newer replica added is left out, so entries it writes during a rolling
        # upgrade still load here.
        return cls(**{name: value for name, value in values.items() if name in _FIELDS})


_FIELDS = frozenset(field.name for field in fields(TableSummary))


class LobbyIndex:
    """The in-memory copy of the bucket, kept current by a watcher task."""

    def __init__(
        self,
        jetstream: JetStreamContext,
        bucket: str,
        *,
        finished_retention_seconds: float = DEFAULT_FINISHED_RETENTION_SECONDS,
        now: Callable[[], float] = time.time,
        sweep_interval_seconds: float = SWEEP_INTERVAL_SECONDS,
    ) -> None:
        """``finished_retention_seconds``: how long a finished table stays; 0 keeps it."""
        self._js = jetstream
        self._bucket_name = bucket
        self.finished_retention_seconds = finished_retention_seconds
        self._now = now
        self._sweep_interval = sweep_interval_seconds
        self._sweeper_task: asyncio.Task[None] | None = None
        self._bucket: KeyValue | None = None
        #: The open and running tables' summaries.
        self._tables: dict[str, TableSummary] = {}
        #: The same summaries by status, kept as they change: the timers look at open and
        #: running tables many times a second.
        self._by_status: dict[str, dict[str, TableSummary]] = {}
        #: The finished tables, kept as their JSON and their time of expiry's reference (when
        #: they finished): a day of games at 1,000 moves/s is over a million of them, and
        #: dicts of strings, bytes and floats are nothing the garbage collector walks, where
        #: as summaries every full collection would walk them all (an object each).
        self._finished: dict[str, bytes] = {}
        self._finished_at: dict[str, float] = {}
        #: Seats each person holds at open and running tables, kept as summaries come and go.
        self._seats_by_person: dict[str, int] = {}
        self._watcher_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        #: The bucket's last message when the watch began, and the latest the watch has seen:
        #: loaded once the one reaches the other.
        self._loaded_through = 0
        self._seen_revision = 0

    async def start(self) -> None:
        try:
            self._bucket = await self._js.key_value(self._bucket_name)
        except BucketNotFoundError:
            self._bucket = await self._js.create_key_value(bucket=self._bucket_name, history=1)
        # nats-py may mark the initial values delivered before it hands them over (its
        # consumer may have sent them all while none has reached the watcher yet), so the
        # load also waits for the bucket's last message as it stood before the watch began.
        state = (await self._bucket.status()).stream_info.state
        self._loaded_through = state.last_seq if state.messages else 0
        self._watcher_task = asyncio.create_task(self._watch(), name="lobby-index-watch")
        await asyncio.wait_for(self._ready.wait(), timeout=30)
        if self.finished_retention_seconds:
            self._sweeper_task = asyncio.create_task(self._sweep_forever(), name="lobby-sweep")

    async def stop(self) -> None:
        for task in (self._sweeper_task, self._watcher_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _watch(self) -> None:
        assert self._bucket is not None
        watcher = await self._bucket.watchall()
        try:
            async for entry in watcher:
                if entry is None:  # the initial values are all delivered, or soon will be
                    if self._seen_revision >= self._loaded_through:
                        self._ready.set()
                    else:  # a message the client skips must not hold the start-up for ever
                        asyncio.get_running_loop().call_later(LOAD_GRACE_SECONDS, self._ready.set)
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
                self._seen_revision = max(self._seen_revision, entry.revision or 0)
                if self._seen_revision >= self._loaded_through:
                    self._ready.set()
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[no-untyped-call]

    async def put(self, summary: TableSummary) -> None:
        """Publish a table's summary; failures are logged, never fatal (the log is the truth).

        Most moves change nothing a lobby shows (status and seats are what it needs), so an
        unchanged summary is not written again.
        """
        if self.get(summary.table_id) == summary:
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

    def expired(self) -> list[str]:
        """The finished tables whose retention has passed (none when retention is 0)."""
        if not self.finished_retention_seconds:
            return []
        cutoff = self._now() - self.finished_retention_seconds
        return [table_id for table_id, at in self._finished_at.items() if at <= cutoff]

    async def sweep(self) -> int:
        """Drop the expired finished tables from memory and the bucket; how many were dropped.

        A table stays in memory while its purge fails (NATS away), so the next sweep retries.
        """
        dropped = 0
        for table_id in self.expired():
            if self._bucket is not None:
                try:
                    await self._js.purge_stream(
                        f"KV_{self._bucket_name}", subject=f"$KV.{self._bucket_name}.{table_id}"
                    )
                except Exception as error:
                    _log.warning(
                        "lobby entry not purged", extra={"table_id": table_id, "error": repr(error)}
                    )
                    continue
            self._drop(table_id)
            dropped += 1
        return dropped

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval)
            try:
                dropped = await self.sweep()
            except Exception:  # never let one bad sweep end the sweeping
                _log.exception("lobby sweep failed")
                continue
            if dropped:
                _log.info("finished tables left the lobby", extra={"tables": dropped})

    def _store(self, summary: TableSummary) -> None:
        self._drop(summary.table_id)
        if summary.status == FINISHED:
            self._finished[summary.table_id] = summary.to_json()
            # an entry from before finished_at existed: its creation is the best bound known
            self._finished_at[summary.table_id] = summary.finished_at or summary.created_at
            return
        self._tables[summary.table_id] = summary
        self._by_status.setdefault(summary.status, {})[summary.table_id] = summary
        for person in summary.people:
            self._seats_by_person[person] = self._seats_by_person.get(person, 0) + 1

    def _drop(self, table_id: str) -> None:
        old = self._tables.pop(table_id, None)
        if old is not None:
            self._by_status.get(old.status, {}).pop(table_id, None)
            for person in old.people:
                remaining = self._seats_by_person[person] - 1
                if remaining:
                    self._seats_by_person[person] = remaining
                else:
                    del self._seats_by_person[person]
        self._finished.pop(table_id, None)
        self._finished_at.pop(table_id, None)

    def tables(self, *statuses: str) -> list[TableSummary]:
        """The summaries, oldest first; only those with one of ``statuses`` when given (that
        costs what those tables count, not what every table ever served counts)."""
        chosen = [
            summary
            for status in statuses or (*self._by_status, FINISHED)
            for summary in self.with_status(status)
        ]
        return sorted(chosen, key=lambda summary: (summary.created_at, summary.table_id))

    def with_status(self, status: str) -> Iterable[TableSummary]:
        """The summaries with ``status``, in no order: a live view, not to change while read."""
        if status == FINISHED:
            return (TableSummary.from_json(data) for data in self._finished.values())
        return self._by_status.get(status, {}).values()

    def seats_held(self, player_id: str) -> int:
        """The seats ``player_id`` holds at open and running tables, across replicas."""
        return self._seats_by_person.get(player_id, 0)

    def get(self, table_id: str) -> TableSummary | None:
        summary = self._tables.get(table_id)
        if summary is None and table_id in self._finished:
            return TableSummary.from_json(self._finished[table_id])
        return summary
