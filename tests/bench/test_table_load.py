"""The load clients' bookkeeping: warm-up moves are not counted, and the pacer keeps time."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from cardtable.bench import table_load
from cardtable.bench.table_load import LoadResult, Pacer, _Table
from cardtable_api.table.v1 import table_pb2


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
