"""The move floor: the hops every move takes, with nothing of ours in them.

A move through this system crosses, at the least: the client's call to the table service, the
table service's question to the rules service, and an acknowledged JetStream append; and a
client must see its view before it moves. The floor makes exactly those hops between the same
kinds of process on the same machine (``floor_servers``: a table server, a rules server that
answers every question with the question, the run's NATS), over the same transport as the
bench's pipeline clients (one bidi stream each way, calls that wait together sharing a
message, ``floor_frames``), at the same number of tables and the same offered rates, but
with no protobuf, tokens, engine, logs or metrics.

What the floor measures is therefore what no code of ours could beat on this machine with
this stack (Python, grpc.aio, nats-py, NATS): its p99 at the offered rate is the lowest p99
any implementation of the brief could reach there, and the rate it saturates at is the most
moves any could make. The system's figures are reported beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from nats.js import JetStreamContext, api

from cardtable.platform.memory import collector_paused
from cardtable_tools.bench.floor_frames import FramedCaller
from cardtable_tools.bench.floor_servers import ANSWERED, MOVE, TABLE_KEY_BYTES, TABLE_METHOD, VIEW
from cardtable_tools.bench.local_server import local_server
from cardtable_tools.bench.stack import process_tree_cpu_seconds
from cardtable_tools.bench.table_load import WARMUP_SHARE, LoadResult, Pacer

SERVERS = "cardtable_tools.bench.floor_servers"
#: The calls a move makes that a server answers: its view, its move, the rules question.
CALLS_PER_MOVE = 3
#: About the size of a move's request, a view and a batch of events (generous: ours are larger).
PAYLOAD = secrets.token_bytes(300)


class FloorLoad:
    """``tables`` tables, each making one move at a time: read the view, then move (timed)."""

    def __init__(self, caller: FramedCaller, result: LoadResult, deadline: float) -> None:
        self._caller = caller
        self._result = result
        self._deadline = deadline
        #: Every move the table server acknowledged, warm-up included (the stream must hold
        #: exactly these).
        self.acknowledged = 0

    async def play_table(self, interval: float) -> None:
        key = secrets.token_bytes(TABLE_KEY_BYTES)
        pacer = Pacer(interval)
        if interval:  # spread the tables over the interval, as the system's load does
            await asyncio.sleep(secrets.randbelow(1000) / 1000 * interval)
        while time.perf_counter() < self._deadline:
            await self._caller(VIEW + key + PAYLOAD)
            await pacer.wait()
            started = time.perf_counter()
            reply = await self._caller(MOVE + key + PAYLOAD)
            if reply[:1] != ANSWERED:
                self._result.errors += 1
                reason = reply[1:].decode(errors="replace")[:80]
                self._result.errors_by_code[reason] = self._result.errors_by_code.get(reason, 0) + 1
                continue
            self.acknowledged += 1
            if started >= self._result.counting_from:
                self._result.latencies_ms.append((time.perf_counter() - started) * 1000)
                self._result.moves += 1


class CpuClock:
    """CPU seconds of the floor's processes (and NATS, when we started it) and this one."""

    def __init__(self, pids: dict[str, int]) -> None:
        self._pids = pids
        self._before = self._read()

    def restart(self) -> None:
        self._before = self._read()

    def _read(self) -> dict[str, float]:
        readings = {name: process_tree_cpu_seconds(pid) for name, pid in self._pids.items()}
        readings["clients"] = time.process_time()
        return readings

    def used(self) -> dict[str, float]:
        after = self._read()
        return {name: after[name] - self._before[name] for name in after}


@contextlib.asynccontextmanager
async def floor_servers(
    nats_url: str, jetstream: JetStreamContext, work_us_per_call: float = 0.0
) -> AsyncIterator[tuple[str, dict[str, int], str]]:
    """The floor's rules and table servers on a throw-away stream: (address, pids, stream).

    ``work_us_per_call``: CPU each server spends on each call it answers (``floor_servers``).
    """
    stream = f"floor_{secrets.token_hex(4)}"
    work = f"{work_us_per_call:g}"
    await jetstream.add_stream(
        api.StreamConfig(name=stream, subjects=[f"{stream}.>"], storage=api.StorageType.FILE)
    )
    try:
        async with (
            local_server(SERVERS, "rules", work) as rules,
            local_server(SERVERS, "table", work, rules.address, nats_url, stream) as table,
        ):
            yield table.address, {"floor rules": rules.pid, "floor table": table.pid}, stream
    finally:
        await jetstream.delete_stream(stream)


async def _floor_run(
    caller: FramedCaller,
    pids: dict[str, int],
    tables: int,
    seconds: float,
    target_moves_per_s: float | None,
) -> tuple[dict[str, Any], int]:
    """One load on the floor: its figures, and how many moves were acknowledged in all."""
    interval = tables / target_moves_per_s if target_moves_per_s else 0.0
    result = LoadResult(tables=tables, seconds=seconds)
    started = time.perf_counter()
    result.counting_from = started + WARMUP_SHARE * seconds
    load = FloorLoad(caller, result, started + seconds)
    cpu = CpuClock(pids)
    loop = asyncio.get_running_loop()
    warm_up = loop.call_at(loop.time() + WARMUP_SHARE * seconds, cpu.restart)
    try:
        with collector_paused():  # as for the system's clients (table_load.run_load)
            await asyncio.gather(*(load.play_table(interval) for _ in range(tables)))
            result.seconds = time.perf_counter() - result.counting_from
    finally:
        warm_up.cancel()
    used = cpu.used()
    figures = {
        **result.summary(),
        "target_moves_per_s": target_moves_per_s,
        "cpu_ms_per_move": {
            name: round(seconds_used * 1000 / result.moves, 2) if result.moves else None
            for name, seconds_used in used.items()
        },
    }
    return figures, load.acknowledged


async def measure_floor(
    nats_url: str,
    jetstream: JetStreamContext,
    tables: int,
    seconds: float,
    rates: list[float | None],
    nats_pid: int | None = None,
    work_us_per_call: float = 0.0,
) -> dict[str, Any]:
    """The floor at ``tables`` tables, once per offered rate (None: as fast as it answers).

    ``nats_pid``: count NATS's CPU too (when the bench started it). ``work_us_per_call``:
    stand-in work per call (``floor_servers``). The report says how many moves were
    acknowledged and how many messages the stream holds: the same number, or the floor did
    not do what it claims.
    """
    runs = []
    acknowledged = 0
    async with floor_servers(nats_url, jetstream, work_us_per_call) as (address, pids, stream):
        if nats_pid is not None:
            pids["nats"] = nats_pid
        async with grpc.aio.insecure_channel(address) as channel:
            for rate in rates:
                caller = FramedCaller(channel, TABLE_METHOD)
                try:
                    run, made = await _floor_run(caller, pids, tables, seconds, rate)
                finally:
                    await caller.close()
                runs.append(run)
                acknowledged += made
        appended = (await jetstream.stream_info(stream)).state.messages
    return {
        "tables": tables,
        "work_us_per_move": CALLS_PER_MOVE * work_us_per_call,
        "runs": runs,
        "acknowledged": acknowledged,
        "appended": appended,
    }
