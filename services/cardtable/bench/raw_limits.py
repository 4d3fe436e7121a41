"""The machine's raw limits, measured in the same run as a benchmark so ratios mean something."""

from __future__ import annotations

import asyncio
import secrets
import time

from nats.js import JetStreamContext, api


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
    payload = secrets.token_bytes(300)  # about the size of one move's batch
    count = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def publisher(worker: int) -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await jetstream.publish(f"{name}.table.{worker}", payload)
            count += 1

    try:
        await asyncio.gather(*(publisher(worker) for worker in range(in_flight)))
    finally:
        await jetstream.delete_stream(name)
    return count / (time.perf_counter() - started)
