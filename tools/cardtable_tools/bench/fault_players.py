"""The players of a fault run: people's clients that keep a ledger, and tables of computers.

A person's client here behaves as a careful real one must: every command carries a command id,
and a call that failed in a way that leaves its outcome unknown (the service went away, the
deadline passed) is sent again with the *same* id until it gets an answer. The table service
stores a command id once, so the retry either finds the move already made or makes it. Every
MakeMove answered OK goes into the ledger that the run later holds against the log.

Tables of computer players (``fill_with_bots``) make the bot service's faults matter; one that
finishes is replaced by a new one while the run lasts.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from cardtable.client.views import random_legal_action
from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.application import caller_command_id
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc
from cardtable_tools.bench.fault_checks import AckedMove
from cardtable_tools.bench.fault_watch import LogWatch

Reply = TypeVar("Reply")
Metadata = tuple[tuple[str, str], ...]

#: Outcomes after which the command may or may not have been applied: send it again.
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
CALL_TIMEOUT_SECONDS = 5.0
FIRST_RETRY_SECONDS = 0.05
MAX_RETRY_SECONDS = 0.5
#: A client that gets no answer for this long gives up (and the run reports it).
GIVE_UP_SECONDS = 60.0
#: Reconnect quickly after a restart; gRPC's default backoff grows to two minutes.
CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
PERSON_SETTINGS = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False)
# A long turn timer: a bot that is back within it moves itself, and the timer never does.
BOT_SETTINGS = events_pb2.TableSettings(
    turn_timer_ms=60_000, fill_with_bots=True, fill_wait_ms=100, bot_strategy="random"
)
QUICK_HEARTS = common_pb2.GameOptions(values={"quick": "true"})


class GaveUpError(Exception):
    """A call kept failing for ``GIVE_UP_SECONDS``."""


@dataclass
class Ledger:
    """What the clients saw: acknowledged moves, retries and refusals."""

    acked: list[AckedMove] = field(default_factory=list)
    retried: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    person_tables: list[str] = field(default_factory=list)
    bot_tables: set[str] = field(default_factory=set)
    gave_up: int = 0

    def first_ack_after(self, after: float) -> float | None:
        """When the first move acknowledged after ``after`` (wall clock) was."""
        start = len(self.acked)  # recent moves are what is asked for: look back from the end
        while start > 0 and self.acked[start - 1].acked_at > after:
            start -= 1
        return self.acked[start].acked_at if start < len(self.acked) else None

    async def wait_ack_after(self, after: float, limit_seconds: float) -> float | None:
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            found = self.first_ack_after(after)
            if found is not None:
                return found
            await asyncio.sleep(0.05)
        return None


async def until_answered(
    method: Callable[..., Awaitable[Reply]],
    request: Message,
    metadata: Metadata,
    ledger: Ledger,
) -> Reply:
    """Send ``request`` again and again (so with the same command id) until it is answered."""
    delay = FIRST_RETRY_SECONDS
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while True:
        try:
            return await method(request, metadata=metadata, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.aio.AioRpcError as error:
            if error.code() not in RETRYABLE:
                raise
            ledger.retried[error.code().name] += 1
            if time.monotonic() > deadline:
                raise GaveUpError(
                    f"no answer for {GIVE_UP_SECONDS:g}s: {error.details()}"
                ) from None
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_RETRY_SECONDS)


def pick_action(view: table_pb2.GetTableResponse, rng: random.Random) -> str | None:
    """A random legal action from a seat's view, or ``None`` when the seat has none now."""
    return random_legal_action(view.seat_view, rng)


class PersonTable:
    """Four people at one table playing quick Hearts games, one after the other."""

    def __init__(
        self,
        stub: table_pb2_grpc.TableServiceAsyncStub,
        tokens: TokenCodec,
        ledger: Ledger,
        rng: random.Random,
        move_pause_seconds: float,
    ) -> None:
        self._stub = stub
        self._ledger = ledger
        self._rng = rng
        self._pause = move_pause_seconds
        self._players = [f"person-{uuid.uuid4().hex[:10]}" for _ in range(4)]
        self._metadata = [(("authorization", f"Bearer {tokens.issue(p)}"),) for p in self._players]

    async def play(self, stop_new_games: asyncio.Event, stop_now: asyncio.Event) -> None:
        """New games until ``stop_new_games``; a game in hand is dropped at ``stop_now``."""
        try:
            while not stop_new_games.is_set() and not stop_now.is_set():
                table_id = await self._open_table()
                await self._play_game(table_id, stop_now)
        except GaveUpError:
            self._ledger.gave_up += 1

    async def _open_table(self) -> str:
        create = table_pb2.CreateTableRequest(
            command_id=str(uuid.uuid4()),
            game="hearts",
            options=QUICK_HEARTS,
            settings=PERSON_SETTINGS,
        )
        created = await until_answered(
            self._stub.CreateTable, create, self._metadata[0], self._ledger
        )
        self._ledger.person_tables.append(created.table_id)
        for seat in range(4):
            join = table_pb2.JoinTableRequest(
                command_id=str(uuid.uuid4()), table_id=created.table_id, seat=seat
            )
            await until_answered(self._stub.JoinTable, join, self._metadata[seat], self._ledger)
        return str(created.table_id)

    async def _play_game(self, table_id: str, stop_now: asyncio.Event) -> None:
        to_act = [0, 1, 2, 3]
        while not stop_now.is_set():
            seat = self._rng.choice(to_act)
            request = table_pb2.GetTableRequest(table_id=table_id, seat=seat)
            view = await until_answered(
                self._stub.GetTable, request, self._metadata[seat], self._ledger
            )
            if view.game_status.over:
                return
            action = pick_action(view, self._rng)
            if action is None:  # our idea of whose turn it is was out of date
                to_act = list(view.game_status.to_act) or to_act
                continue
            move = table_pb2.MakeMoveRequest(
                command_id=str(uuid.uuid4()), table_id=table_id, seat=seat, action=action
            )
            try:
                reply = await until_answered(
                    self._stub.MakeMove, move, self._metadata[seat], self._ledger
                )
            except grpc.aio.AioRpcError as error:  # refused: look at the table again
                self._ledger.refused[error.code().name] += 1
                continue
            # the log stores the command id scoped to its caller
            stored_id = caller_command_id(self._players[seat], move.command_id)
            self._ledger.acked.append(AckedMove(table_id, stored_id, reply.version, time.time()))
            if reply.status.over:
                return
            to_act = list(reply.status.to_act) or to_act
            await asyncio.sleep(self._pause)


class BotTables:
    """Keeps ``count`` tables of computer players going: a finished one is replaced."""

    def __init__(
        self,
        stub: table_pb2_grpc.TableServiceAsyncStub,
        tokens: TokenCodec,
        ledger: Ledger,
        watch: LogWatch,
        count: int,
    ) -> None:
        self._stub = stub
        self._ledger = ledger
        self._watch = watch
        self._count = count
        self._metadata = (("authorization", f"Bearer {tokens.issue('fault-run-host')}"),)

    async def keep_going(self, stop_new_games: asyncio.Event) -> None:
        try:
            slots = [await self._open_table() for _ in range(self._count)]
            while not stop_new_games.is_set():
                for index, table_id in enumerate(slots):
                    if table_id in self._watch.finished_tables and not stop_new_games.is_set():
                        slots[index] = await self._open_table()
                await asyncio.sleep(0.2)
        except GaveUpError:
            self._ledger.gave_up += 1

    def all_finished(self) -> bool:
        return all(table_id in self._watch.finished_tables for table_id in self._ledger.bot_tables)

    async def _open_table(self) -> str:
        create = table_pb2.CreateTableRequest(
            command_id=str(uuid.uuid4()), game="hearts", options=QUICK_HEARTS, settings=BOT_SETTINGS
        )
        created = await until_answered(self._stub.CreateTable, create, self._metadata, self._ledger)
        self._ledger.bot_tables.add(created.table_id)
        return str(created.table_id)
