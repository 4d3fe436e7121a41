"""The machine's raw limits, measured in the same run as a benchmark so ratios mean something.

Each figure is what one Python process gets through one client library with nothing of ours
in the way: acknowledged JetStream appends (nats-py), batched PostgreSQL inserts (asyncpg),
unary gRPC calls (grpc.aio, to a bare echo server in its own process). One more figure is no
limit but the machine's speed that hour: how fast a fixed pure-Python loop runs per CPU second.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import time
from collections.abc import Awaitable, Callable

import asyncpg
import grpc
from nats.js import JetStreamContext, api

from cardtable_tools.bench.grpc_echo import METHOD
from cardtable_tools.bench.local_server import local_server

#: About the size of one move's batch of events.
PAYLOAD = secrets.token_bytes(300)
#: The steps of one repeat of the speed probe: a few milliseconds of CPU.
SPEED_STEPS = 100_000


async def _rate(
    seconds: float, in_flight: int, one_call: Callable[[int], Awaitable[object]]
) -> float:
    """Calls per second with ``in_flight`` workers calling ``one_call`` back to back."""
    count = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def worker(index: int) -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await one_call(index)
            count += 1

    await asyncio.gather(*(worker(index) for index in range(in_flight)))
    return count / (time.perf_counter() - started)


async def jetstream_append_rate(
    jetstream: JetStreamContext, seconds: float = 3.0, in_flight: int = 1
) -> float:
    """Acknowledged appends per second from this one Python process.

    ``in_flight`` publishes wait for their acks at once (1: strictly one after the other), on
    a throw-away file-storage stream like the event store's.
    """
    name = f"bench_raw_{secrets.token_hex(4)}"
    await jetstream.add_stream(
        api.StreamConfig(name=name, subjects=[f"{name}.>"], storage=api.StorageType.FILE)
    )
    try:
        return await _rate(
            seconds,
            in_flight,
            lambda worker: jetstream.publish(f"{name}.table.{worker}", PAYLOAD),
        )
    finally:
        await jetstream.delete_stream(name)


async def postgres_insert_rate(
    database_url: str, rows: int = 50_000, batch_rows: int = 5_000
) -> float:
    """Rows per second of plain batched inserts (``executemany``, one transaction per batch).

    The rows look like events: a sequence, a table id and ~300 bytes, into a table of its own
    that is dropped afterwards. This is the method the scoring benchmark compares against.
    """
    table = f"bench_plain_{secrets.token_hex(4)}"
    values = [(sequence, f"table-{sequence % 97}", PAYLOAD) for sequence in range(rows)]
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute(
            f"CREATE TABLE {table} (sequence bigint, table_id text, event bytea)"
        )
        started = time.perf_counter()
        for start in range(0, rows, batch_rows):
            async with connection.transaction():
                await connection.executemany(
                    f"INSERT INTO {table} VALUES ($1, $2, $3)", values[start : start + batch_rows]
                )
        rate = rows / (time.perf_counter() - started)
        await connection.execute(f"DROP TABLE {table}")
    finally:
        await connection.close()
    return rate


async def grpc_unary_rate(seconds: float = 3.0, in_flight: int = 1) -> float:
    """Unary calls per second from this process to a bare echo server in another one."""
    async with (
        local_server("cardtable_tools.bench.grpc_echo") as echo_server,
        grpc.aio.insecure_channel(echo_server.address) as channel,
    ):
        echo = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        await channel.channel_ready()
        return await _rate(seconds, in_flight, lambda _: echo(PAYLOAD))


def python_speed(seconds: float = 1.0) -> float:
    """Million steps of a fixed pure-Python loop per CPU second of this thread, the median of
    its repeats over ``seconds`` (at least three).

    The speed of this machine per instruction moves from hour to hour: it is a virtual machine
    (KVM), and its steal time stays near zero while it slows, so the instructions themselves
    take longer, and the CPU a move costs moves with them, so a report's CPU per move is read
    beside this figure (docs/proving-it.md#reading-the-report).
    Thread CPU time: time spent waiting for a core does not count, only slower instructions.
    It is context, not a yardstick: consecutive one-second readings differ by up to a quarter,
    too much to convert a run's CPU per move into the machine's speed-free units.
    """
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(samples) < 3 or time.perf_counter() < deadline:
        started = time.thread_time()
        _steps(SPEED_STEPS)
        used = time.thread_time() - started
        if used > 0:
            samples.append(SPEED_STEPS / used / 1e6)
    return statistics.median(samples)


def _steps(count: int) -> int:
    """The probe's work: a loop of integer operations, like the interpreter's everyday work."""
    total = 0
    for step in range(count):
        total += step & 7
    return total
