"""Watching the system work during a fault run: the log as it grows, the projection's position.

Whether something "works again" after a restart is read from the log itself: every message
carries the time JetStream stored it, so the first bot move stored after a restart dates the
bot service's recovery exactly, however late this watcher (itself cut off while NATS is down)
gets to see it. The watcher reads with a durable pull consumer, which outlives a NATS restart,
and skips anything it has already seen.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg
import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, NotFoundError

from cardtable.platform.log_names import LogNames
from cardtable.platform.logging import get_logger
from cardtable.scoring_service.database import replace_connections_after
from cardtable.scoring_service.writer import read_position
from cardtable_api.events.v1 import events_pb2

WATCH_CONSUMER = "faults_watch"
FETCH_BATCH = 512
FETCH_TIMEOUT_SECONDS = 0.25
POLL_SECONDS = 0.05
#: Errors that only mean the server is away for now.
AWAY = (nats.errors.Error, APIError, TimeoutError, OSError)

_log = get_logger(__name__)


@dataclass(frozen=True)
class Seen:
    """One message of the log, as much of it as the fault run needs."""

    sequence: int
    table_id: str
    #: When JetStream stored it (wall clock, seconds since the epoch).
    stored_at: float
    #: It holds an action a player chose (not a timer's).
    chosen_action: bool
    game_finished: bool


class LogWatch:
    """Follows the event stream in the background; answers "what was stored after time t"."""

    def __init__(self, jetstream: JetStreamContext, log: LogNames) -> None:
        self._js = jetstream
        self._log = log
        self.seen: list[Seen] = []
        self.finished_tables: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self._subscription: JetStreamContext.PullSubscription | None = None

    @property
    def last_sequence(self) -> int:
        return self.seen[-1].sequence if self.seen else 0

    async def start(self) -> None:
        await self._js.add_consumer(self._log.stream, self._config(1))
        self._task = asyncio.create_task(self._follow(), name="fault-log-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._subscription is not None:  # else closing the connection waits for it to drain
            with contextlib.suppress(*AWAY):
                await self._subscription.unsubscribe()
        with contextlib.suppress(*AWAY):
            await self._js.delete_consumer(self._log.stream, WATCH_CONSUMER)

    def _config(self, start_sequence: int) -> api.ConsumerConfig:
        return api.ConsumerConfig(
            durable_name=WATCH_CONSUMER,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=start_sequence,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=self._log.tables_subject,
        )

    async def _follow(self) -> None:
        while True:
            try:
                if self._subscription is not None:
                    with contextlib.suppress(*AWAY):
                        await self._subscription.unsubscribe()
                subscription = self._subscription = await self._js.pull_subscribe_bind(
                    durable=WATCH_CONSUMER, stream=self._log.stream
                )
                while True:
                    try:
                        messages = await subscription.fetch(
                            FETCH_BATCH, timeout=FETCH_TIMEOUT_SECONDS
                        )
                    except (TimeoutError, nats.errors.TimeoutError):
                        continue
                    for message in messages:
                        self._note(message)
            except NotFoundError:
                await self._recreate()
            except AWAY as error:
                _log.info("log watch interrupted", extra={"error": repr(error)})
                await asyncio.sleep(0.2)

    async def _recreate(self) -> None:
        """The consumer is gone (it should survive restarts, but be sure): follow on from here."""
        with contextlib.suppress(*AWAY):
            await self._js.add_consumer(self._log.stream, self._config(self.last_sequence + 1))

    def _note(self, message: Msg) -> None:
        metadata = message.metadata
        sequence = metadata.sequence.stream
        if sequence <= self.last_sequence:
            return  # delivered again after a server restart
        table_id = self._log.table_id_of(message.subject) or ""
        batch = events_pb2.EventBatch()
        batch.ParseFromString(message.data)
        chosen = any(
            event.HasField("action_taken") and not event.action_taken.by_timeout
            for event in batch.events
        )
        finished = any(event.HasField("game_finished") for event in batch.events)
        if finished:
            self.finished_tables.add(table_id)
        stored_at = metadata.timestamp.timestamp()
        self.seen.append(Seen(sequence, table_id, stored_at, chosen, finished))

    def first(self, after: float, wanted: Callable[[Seen], bool]) -> Seen | None:
        """The first message stored after ``after`` (wall clock) that is ``wanted``."""
        start = len(self.seen)  # recent messages are what is asked for: look back from the end
        while start > 0 and self.seen[start - 1].stored_at > after:
            start -= 1
        return next((item for item in self.seen[start:] if wanted(item)), None)

    def moves_per_second(self, start: float, end: float) -> float:
        """Chosen moves stored between ``start`` and ``end`` (wall clock), per second."""
        if end <= start:
            return 0.0
        moves = sum(1 for item in self.seen if item.chosen_action and start <= item.stored_at < end)
        return moves / (end - start)

    @property
    def jetstream(self) -> JetStreamContext:
        return self._js

    async def wait_first(
        self, after: float, wanted: Callable[[Seen], bool], limit_seconds: float
    ) -> Seen | None:
        """``first`` once it exists, or ``None`` after ``limit_seconds``."""
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            found = self.first(after, wanted)
            if found is not None:
                return found
            await asyncio.sleep(POLL_SECONDS)
        return None


class ProjectionPosition:
    """The live projection's position, read from PostgreSQL, which may be away for a while.

    Sampled in the background (``start``) and kept with the time of each reading: the log
    watch can learn late that a message was stored (its own consumer waits out a cluster's lost
    server), and the time the projection passed that message must not wait with it.
    """

    def __init__(self, pool: asyncpg.Pool, stream: str) -> None:
        self._pool = pool
        self._stream = stream
        #: (wall-clock time, position) of each reading that answered, positions non-decreasing.
        self._samples: list[tuple[float, int]] = []
        self._task: asyncio.Task[None] | None = None

    async def read(self) -> int | None:
        """The position, or ``None`` while PostgreSQL does not answer."""
        try:
            return await asyncio.wait_for(read_position(self._pool, self._stream), 2.0)
        except (*AWAY, asyncpg.PostgresError, asyncpg.InterfaceError):
            return None
        except asyncpg.InternalClientError as error:
            # A pooled connection left in a state no query can run in, seen after PostgreSQL
            # restarts: fresh connections cure it, as in the scoring service (database.py).
            await replace_connections_after(error, self._pool)
            return None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._sample(), name="fault-projection-position")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _sample(self) -> None:
        while True:
            position = await self.read()
            if position is not None:
                self.note(time.time(), position)
            await asyncio.sleep(POLL_SECONDS * 2)

    def note(self, at: float, position: int) -> None:
        """A reading of ``position`` at wall-clock time ``at`` (readings come in time order)."""
        if not self._samples or position > self._samples[-1][1]:
            self._samples.append((at, position))

    def reached_at(self, sequence: int) -> float | None:
        """When a reading first found the position at ``sequence`` or beyond, if one has."""
        index = bisect.bisect_left(self._samples, sequence, key=lambda sample: sample[1])
        return self._samples[index][0] if index < len(self._samples) else None

    async def wait_for(self, sequence: int, limit_seconds: float) -> float | None:
        """Wall-clock time at which the position was seen at ``sequence`` or beyond."""
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            reached = self.reached_at(sequence)
            if reached is not None:
                return reached
            if self._task is None:  # not sampling: read now
                position = await self.read()
                if position is not None and position >= sequence:
                    return time.time()
            await asyncio.sleep(POLL_SECONDS * 2)
        return None
