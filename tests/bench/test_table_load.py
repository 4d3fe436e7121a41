"""The load clients' bookkeeping: warm-up moves are not counted, and the pacer keeps time."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from cardtable.platform.tokens import TokenCodec
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.bench import table_load
from cardtable_tools.bench.table_load import LoadResult, Pacer, _Table


class AcceptingStub:
    """Accepts every move at once."""

    async def MakeMove(self, request: Any, metadata: Any = ()) -> table_pb2.MakeMoveResponse:
        return table_pb2.MakeMoveResponse(version=1)


def table_with(result: LoadResult, interval: float = 0.0) -> _Table:
    stub: Any = AcceptingStub()
    return _Table(stub, stub, result, time.perf_counter() + 60, Pacer(interval), [()] * 4)


async def test_moves_started_during_the_warm_up_are_not_counted() -> None:
    result = LoadResult(tables=1, seconds=1.0, counting_from=time.perf_counter() + 0.2)
    table = table_with(result)
    await table.move("t", 0, "play 2C")
    assert result.moves == 0 and result.latencies_ms == []
    await asyncio.sleep(0.25)
    await table.move("t", 0, "play 3C")
    assert result.moves == 1 and len(result.latencies_ms) == 1


class FakeClock:
    """``time.perf_counter`` and ``asyncio.sleep`` for the pacer, without waiting."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def perf_counter(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


async def test_the_pacer_keeps_its_schedule_after_a_late_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(table_load.time, "perf_counter", clock.perf_counter)
    monkeypatch.setattr(table_load.asyncio, "sleep", clock.sleep)
    pacer = Pacer(0.1)
    await pacer.wait()  # the first move goes at once: slots at 100.0, 100.1, 100.2, ...
    clock.now += 0.15  # this table is half an interval late for the slot at 100.1
    await pacer.wait()  # so it goes at once
    await pacer.wait()  # and the next keeps the slot at 100.2
    clock.now += 1.0  # a long stall: only one interval of debt is kept
    await pacer.wait()  # at once (now 101.2)
    await pacer.wait()  # at once too: the one interval of debt
    await pacer.wait()  # then a full interval later
    assert clock.slept == [0.05, 0.1]


class FakeTables:
    """A table service whose games are a fixed number of moves, each move always legal.

    Stands in for the stub and the channel so that the load's own bookkeeping (the ramp
    before the timed run) can be checked without servers; what a move costs is measured
    against the real ones (test_system_bench).
    """

    def __init__(self) -> None:
        self.created = 0
        self.moves: dict[str, list[float]] = {}

    async def CreateTable(self, request: Any, metadata: Any = ()) -> Any:
        self.created += 1
        table_id = f"table-{self.created}"
        self.moves[table_id] = []
        return table_pb2.CreateTableResponse(table_id=table_id)

    async def JoinTable(self, request: Any, metadata: Any = ()) -> Any:
        return table_pb2.JoinTableResponse()

    async def GetTable(self, request: Any, metadata: Any = ()) -> Any:
        response = table_pb2.GetTableResponse()
        response.seat_view.legal_actions.add(action="play 2C")
        return response

    async def MakeMove(self, request: Any, metadata: Any = ()) -> Any:
        made = self.moves[request.table_id]
        made.append(time.perf_counter())
        response = table_pb2.MakeMoveResponse(version=len(made))
        response.status.over = len(made) == table_load.MOVES_PER_GAME
        response.status.to_act.append(0)
        return response

    def first_games(self) -> list[list[float]]:
        """Each table's first game's move times, in the order the tables were created."""
        return [self.moves[f"table-{number}"] for number in range(1, self.created + 1)][:8]


@pytest.fixture
def fake_tables(monkeypatch: pytest.MonkeyPatch) -> FakeTables:
    tables = FakeTables()

    class Channel:
        async def __aenter__(self) -> Channel:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(table_load.grpc.aio, "insecure_channel", lambda address: Channel())
    monkeypatch.setattr(table_load.table_pb2_grpc, "TableServiceStub", lambda channel: tables)
    return tables


async def test_paced_tables_start_the_timed_run_at_different_points_of_their_games(
    fake_tables: FakeTables,
) -> None:
    result = await table_load.run_load(
        "fake", TokenCodec("k" * 32), 8, 0.5, target_moves_per_s=160.0, clients="poll"
    )
    started = result.counting_from - table_load.WARMUP_SHARE * 0.5
    ramps = [sum(1 for at in game if at < started) for game in fake_tables.first_games()]
    # Each table played its own random share of its first game before the timed run, so
    # the tables' games do not end together; the ramp's moves are not counted.
    assert len(set(ramps)) >= 5 and all(moves < table_load.MOVES_PER_GAME for moves in ramps)
    assert result.moves == sum(1 for at in _all(fake_tables) if at >= result.counting_from)


async def test_unpaced_tables_need_no_ramp(fake_tables: FakeTables) -> None:
    result = await table_load.run_load("fake", TokenCodec("k" * 32), 8, 0.3, clients="poll")
    started = result.counting_from - table_load.WARMUP_SHARE * 0.3
    assert all(at >= started for at in _all(fake_tables))
    assert result.moves > 0


def _all(tables: FakeTables) -> list[float]:
    return [at for game in tables.moves.values() for at in game]
