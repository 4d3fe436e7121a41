"""Moves per second through the table service over gRPC, with many tables played at once.

Each simulated table has four clients that play Hearts quick games over and over, each making
random legal moves from its own view, the way a person's client would. Three client models:

- ``pipeline`` (the default): one backend serving all the clients, as a game front end
  would. Each game's table is opened with ``CreateTable`` and its four seats taken with
  ``JoinTable``; each client reads its own view with ``GetTable`` before each of its moves,
  then moves with ``MakeMove``. The calls, each with its own player's token, go over one
  ``TableService.Pipeline`` stream, and calls made at the same moment share a message, which
  costs a move far less CPU (docs/proving-it.md#settings-the-figures-chose);
- ``poll``: the same clients, each call a unary call of its own;
- ``turns``: each client keeps a ``WatchTurns`` stream open for its seat, is told its view
  when it is to act, and answers with ``MakeMove``. It costs the system about as much CPU per
  move as ``poll`` (a streamed message costs grpc.aio about what a unary call does), and since
  no client time goes to reading views, the same tables keep more moves waiting at once: at
  full load the move latency is higher (docs/proving-it.md#client-models).

Only MakeMove calls count as moves; their latency is measured from the client's side. An
optional target rate paces each table's moves to measure latency below saturation. The first
tenth of a run is warm-up: every table sits down at once then, which a steady load never sees,
so moves started before it ends are neither counted nor timed, and the rate is over the rest.

Paced tables are first spread over the course of a game (``ramp``). Every game of the load
has the same number of moves, so tables that start together at one pace stay in step: they
all finish their games, create new tables, seat four players and deal within the same tenth
of a second, every game, a burst a steady load of independent tables never sees (a cluster
of slow moves every game: docs/proving-it.md#settings-the-figures-chose). So before the
timed run each paced table plays a random number of its first game's moves, at once and
untimed; then every table is at its own point of its game.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardtable.client.table_pipeline import PipelinedTableStub
from cardtable.client.views import random_legal_action
from cardtable.platform.memory import collector_paused
from cardtable.platform.tokens import TokenCodec
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

NO_TIMERS = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False)
CLIENT_MODELS = ("poll", "pipeline", "turns")
#: The share of a run at its start whose moves are not counted (see the module doc).
WARMUP_SHARE = 0.1
#: Moves in one Hearts quick game (52 cards played, four passes): a paced table's ramp plays
#: a random number of moves below it, so games end at random points of the pace.
MOVES_PER_GAME = 56


@dataclass
class LoadResult:
    tables: int
    seconds: float
    moves: int = 0
    games: int = 0
    errors: int = 0
    errors_by_code: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    #: ``time.perf_counter()`` from which moves count: the end of the warm-up.
    counting_from: float = 0.0

    def percentile(self, share: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    def summary(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "seconds": round(self.seconds, 2),
            "moves": self.moves,
            "games": self.games,
            "errors": self.errors,
            "errors_by_code": dict(self.errors_by_code),
            "moves_per_s": round(self.moves / self.seconds, 1) if self.seconds else 0.0,
            "move_latency_p50_ms": round(self.percentile(0.50), 2),
            "move_latency_p95_ms": round(self.percentile(0.95), 2),
            "move_latency_p99_ms": round(self.percentile(0.99), 2),
        }


class Pacer:
    """One table's moves on a schedule of one per ``interval`` seconds (0: no pacing).

    A move that comes late (its view took long, a new game was being set up) does not move
    the schedule: the next one may follow at once, so the table still offers its share of
    the rate. At most one interval of such debt is kept, so a long stall is not made up for
    with a burst.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._next_at: float | None = None

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.perf_counter()
        if self._next_at is None:
            self._next_at = now
        at = max(now, self._next_at)
        self._next_at = max(self._next_at, now - self.interval) + self.interval
        if at > now:
            await asyncio.sleep(at - now)


@dataclass
class _Table:
    """What the clients of one simulated table share."""

    stub: table_pb2_grpc.TableServiceAsyncStub
    #: What every call but WatchTurns goes through: the stub, or one Pipeline stream for all
    #: tables.
    moves: table_pb2_grpc.TableServiceAsyncStub | PipelinedTableStub
    result: LoadResult
    deadline: float
    pacer: Pacer
    metadata: Sequence[tuple[tuple[str, str], ...]]

    async def new_game(self) -> str:
        created = await self.moves.CreateTable(
            table_pb2.CreateTableRequest(
                command_id=str(uuid.uuid4()),
                game="hearts",
                options=common_pb2.GameOptions(values={"quick": "true"}),
                settings=NO_TIMERS,
            ),
            metadata=self.metadata[0],
        )
        for seat in range(4):
            await self.moves.JoinTable(
                table_pb2.JoinTableRequest(
                    command_id=str(uuid.uuid4()), table_id=created.table_id, seat=seat
                ),
                metadata=self.metadata[seat],
            )
        return created.table_id

    async def move(
        self, table_id: str, seat: int, action: str
    ) -> table_pb2.MakeMoveResponse | None:
        """One timed MakeMove; None (and an error counted) when it is refused."""
        await self.pacer.wait()
        started = time.perf_counter()
        try:
            reply = await self.moves.MakeMove(
                table_pb2.MakeMoveRequest(
                    command_id=str(uuid.uuid4()), table_id=table_id, seat=seat, action=action
                ),
                metadata=self.metadata[seat],
            )
        except grpc.aio.AioRpcError as error:
            self.result.errors += 1
            code = error.code().name
            self.result.errors_by_code[code] = self.result.errors_by_code.get(code, 0) + 1
            return None
        if started >= self.result.counting_from:
            self.result.latencies_ms.append((time.perf_counter() - started) * 1000)
            self.result.moves += 1
        return reply

    async def view(
        self, table_id: str, seat: int, min_version: int = 0
    ) -> table_pb2.GetTableResponse:
        return await self.moves.GetTable(
            table_pb2.GetTableRequest(table_id=table_id, seat=seat, min_version=min_version),
            metadata=self.metadata[seat],
        )


@dataclass
class _Seated:
    """A table's players, ready to play; the game its ramp left unfinished, if any."""

    rng: random.Random
    metadata: Sequence[tuple[tuple[str, str], ...]]
    table_id: str | None = None
    version: int = 0


async def _ramp(
    stub: table_pb2_grpc.TableServiceAsyncStub,
    moves: table_pb2_grpc.TableServiceAsyncStub | PipelinedTableStub,
    tokens: TokenCodec,
    rng: random.Random,
    ramp_moves: int,
) -> _Seated:
    """A table's players, and its first game played ``ramp_moves`` moves in, untimed."""
    players = [f"load-{uuid.uuid4().hex[:12]}" for _ in range(4)]
    metadata = [(("authorization", f"Bearer {tokens.issue(player)}"),) for player in players]
    seated = _Seated(rng, metadata)
    if not ramp_moves:
        return seated
    untimed = LoadResult(tables=1, seconds=0.0, counting_from=math.inf)
    table = _Table(stub, moves, untimed, math.inf, Pacer(0.0), metadata)
    seated.table_id = await table.new_game()
    seated.version = await _poll_and_play(table, seated.table_id, rng, stop_after=ramp_moves)
    if seated.version == 0:  # the game ended within the ramp: the timed run starts a new one
        seated.table_id = None
    return seated


async def _play_table(
    stub: table_pb2_grpc.TableServiceAsyncStub,
    moves: table_pb2_grpc.TableServiceAsyncStub | PipelinedTableStub,
    seated: _Seated,
    result: LoadResult,
    deadline: float,
    interval: float,
    clients: str,
) -> None:
    rng = seated.rng
    if interval:  # spread the paced tables over the interval instead of moving in step
        await asyncio.sleep(rng.uniform(0, interval))
    table = _Table(stub, moves, result, deadline, Pacer(interval), seated.metadata)
    table_id, seated.table_id = seated.table_id, None
    while time.perf_counter() < deadline:
        if table_id is None:
            table_id = await table.new_game()
        if clients == "turns":
            seat_rngs = [random.Random(rng.random()) for _ in range(4)]
            await asyncio.gather(
                *(_play_seat(table, table_id, seat, seat_rngs[seat]) for seat in range(4))
            )
        else:
            await _poll_and_play(table, table_id, rng, known_version=seated.version)
        table_id, seated.version = None, 0


async def _play_seat(table: _Table, table_id: str, seat: int, rng: random.Random) -> None:
    """One client of the ``turns`` model: its seat's stream says when to act and what it sees."""
    stream = table.stub.WatchTurns(
        table_pb2.WatchTurnsRequest(table_id=table_id, seat=seat), metadata=table.metadata[seat]
    )
    try:
        # At the deadline the seats stop moving, so a seat still waiting for its turn would
        # wait forever: its wait ends with the deadline too.
        async with asyncio.timeout(max(0.0, table.deadline - time.perf_counter())):
            moved_at = 0  # the table version this seat's own last move made
            async for turn in stream:
                if turn.game_status.over:
                    if seat == 0:
                        table.result.games += 1
                    return
                if turn.version < moved_at:
                    continue  # sent while this seat's move was on its way: answered by that move
                action = random_legal_action(turn.seat_view, rng)
                while action is not None:
                    reply = await table.move(table_id, seat, action)
                    if reply is not None:
                        moved_at = reply.version
                        break
                    # refused (the table moved on meanwhile): read the view again and retry
                    view = await table.view(table_id, seat)
                    action = random_legal_action(view.seat_view, rng)
    except TimeoutError:
        return
    finally:
        stream.cancel()


async def _poll_and_play(
    table: _Table,
    table_id: str,
    rng: random.Random,
    stop_after: int | None = None,
    known_version: int = 0,
) -> int:
    """The ``poll`` model: a seat to act reads its view with GetTable, then moves.

    The table's clients know the version the last move made, so they ask for a view at least
    that new (``min_version``) rather than making the service read the log first. Plays until
    the game is over (0 returned) or the deadline, or ``stop_after`` accepted moves (the
    table's version returned, to go on from as ``known_version``).
    """
    to_act = [0, 1, 2, 3]
    version = known_version
    made = 0
    while time.perf_counter() < table.deadline and made != stop_after:
        seat = rng.choice(to_act)
        view = await table.view(table_id, seat, min_version=version)
        action = random_legal_action(view.seat_view, rng)
        if action is None:  # not this seat's turn after all (another seat moved first)
            continue
        reply = await table.move(table_id, seat, action)
        if reply is None:
            version = 0  # refused: read the log before the next view
            continue
        made += 1
        if reply.status.over:
            table.result.games += 1
            return 0
        to_act = list(reply.status.to_act)
        version = reply.version
    return version


async def run_load(
    address: str,
    tokens: TokenCodec,
    tables: int,
    seconds: float,
    target_moves_per_s: float | None = None,
    clients: str = "pipeline",
    on_warmed_up: Callable[[], None] = lambda: None,
) -> LoadResult:
    """Play ``tables`` tables at once for ``seconds``; pace to a target rate if given.

    ``on_warmed_up`` is called when the warm-up ends, so that a caller measuring what the
    moves cost (CPU) can measure the same stretch of time as the moves counted.
    """
    if clients not in CLIENT_MODELS:
        raise ValueError(f"clients must be one of {', '.join(CLIENT_MODELS)}, not {clients!r}")
    interval = tables / target_moves_per_s if target_moves_per_s else 0.0
    result = LoadResult(tables=tables, seconds=seconds)
    ramped = bool(interval) and clients != "turns"  # see the module doc
    async with grpc.aio.insecure_channel(address) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        pipelined = PipelinedTableStub(channel) if clients == "pipeline" else None
        moves = pipelined or stub
        rngs = [random.Random(index) for index in range(tables)]
        try:
            seated = await asyncio.gather(
                *(
                    _ramp(stub, moves, tokens, rng, rng.randrange(MOVES_PER_GAME) if ramped else 0)
                    for rng in rngs
                )
            )
            loop = asyncio.get_running_loop()
            started = time.perf_counter()
            deadline = started + seconds
            result.counting_from = started + WARMUP_SHARE * seconds
            warm_up = loop.call_at(loop.time() + WARMUP_SHARE * seconds, on_warmed_up)
            try:
                with collector_paused():  # the clients' pauses are not the system's latency
                    await asyncio.gather(
                        *(
                            _play_table(stub, moves, table, result, deadline, interval, clients)
                            for table in seated
                        )
                    )
                    ended = time.perf_counter()
            finally:
                warm_up.cancel()
        finally:
            if pipelined is not None:
                await pipelined.close()
        result.seconds = ended - result.counting_from
    return result
