"""The move floor on a real NATS: it makes the hops it claims, and cleans up after itself."""

from __future__ import annotations

import os
import time

import pytest
from nats.js.errors import NotFoundError

from cardtable.platform.nats import NatsConnection
from cardtable_tools.bench.floor_budget import within_target
from cardtable_tools.bench.floor_frames import pack, unpack
from cardtable_tools.bench.floor_servers import work
from cardtable_tools.bench.move_floor import floor_servers, measure_floor


def test_frames_come_back_as_they_were_packed() -> None:
    frames = [(1, b"view"), (2, b""), (2**32 - 1, bytes(range(256)) * 4)]
    assert list(unpack(pack(frames))) == frames
    assert list(unpack(b"")) == []


@pytest.mark.services
async def test_the_floor_appends_each_acknowledged_move_once(
    nats_url: str, nats_connection: NatsConnection
) -> None:
    report = await measure_floor(
        nats_url, nats_connection.jetstream, tables=3, seconds=2.0, rates=[None, 60.0]
    )
    saturated, paced = report["runs"]
    assert saturated["target_moves_per_s"] is None and paced["target_moves_per_s"] == 60.0
    for run in report["runs"]:
        assert run["moves"] > 0 and run["errors"] == 0
        assert 0 < run["move_latency_p50_ms"] <= run["move_latency_p99_ms"]
        assert {"floor rules", "floor table", "clients"} <= set(run["cpu_ms_per_move"])
    # Paced, it offers what it was asked (the tables spread over the interval, so roughly).
    assert 30 <= paced["moves_per_s"] <= 90 < saturated["moves_per_s"]
    # Every acknowledged move is in the stream exactly once: the hops were really made.
    assert report["acknowledged"] == report["appended"] > saturated["moves"]


@pytest.mark.services
async def test_the_floor_leaves_no_stream_and_no_process_behind(
    nats_url: str, nats_connection: NatsConnection
) -> None:
    jetstream = nats_connection.jetstream
    async with floor_servers(nats_url, jetstream) as (address, pids, stream):
        assert address.startswith("127.0.0.1:")
        await jetstream.stream_info(stream)
        for pid in pids.values():
            os.kill(pid, 0)  # alive
    with pytest.raises(NotFoundError):
        await jetstream.stream_info(stream)
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_stand_in_work_is_cpu_time_not_wall_time() -> None:
    started = time.thread_time()
    work(0.02)
    assert time.thread_time() - started >= 0.02
    work(0.0)  # no work, no wait


def test_a_paced_run_is_judged_against_its_rates_target() -> None:
    def run(rate: float, made: float, p99: float) -> dict[str, float]:
        return {"target_moves_per_s": rate, "moves_per_s": made, "move_latency_p99_ms": p99}

    assert within_target(run(500.0, 499.0, 19.9)) is True
    assert within_target(run(500.0, 499.0, 20.0)) is False
    assert within_target(run(1000.0, 990.0, 45.0)) is True
    assert within_target(run(1000.0, 900.0, 45.0)) is False  # the rate was not sustained
    assert within_target(run(40.0, 40.0, 500.0)) is None
