"""The table-service benchmark: the system on real servers, load, and the raw limits."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from cardtable.bench.raw_limits import jetstream_append_rate
from cardtable.bench.table_load import run_load
from cardtable.platform.dev_servers import async_dev_servers
from cardtable.platform.nats import connect_nats
from cardtable.stack.processes import ServiceProcess, start
from cardtable.table_service.auth import TokenCodec


@dataclass
class BenchStack:
    nats_url: str
    rules: ServiceProcess
    table: ServiceProcess
    tokens: TokenCodec


@contextlib.asynccontextmanager
async def bench_stack() -> AsyncIterator[BenchStack]:
    """NATS (``NATS_URL`` or the embedded wheel), the rules and table services as processes."""
    key = secrets.token_hex(32)
    prefix = f"bench{secrets.token_hex(3)}"
    async with contextlib.AsyncExitStack() as stack:
        nats_url = os.environ.get("NATS_URL")
        if not nats_url:
            servers = await stack.enter_async_context(async_dev_servers(postgres=False))
            nats_url = servers.nats_url
        rules = await start("rules", {})
        stack.callback(rules.terminate)
        table = await start(
            "table",
            {
                "NATS_URL": nats_url,
                "RULES_ADDRESS": rules.address,
                "TOKEN_SIGNING_KEY": key,
                "EVENT_PREFIX": prefix,
            },
        )
        stack.callback(table.terminate)
        yield BenchStack(nats_url, rules, table, TokenCodec(key))


async def table_bench(
    tables: int, seconds: float, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """Saturated load, half-load latency, and the raw JetStream append rate, in one run."""
    async with bench_stack() as stack:
        connection = await connect_nats(stack.nats_url, name="bench")
        try:
            progress("raw JetStream appends (one Python process) ...")
            sequential = await jetstream_append_rate(connection.jetstream, 3.0, in_flight=1)
            concurrent = await jetstream_append_rate(connection.jetstream, 3.0, in_flight=64)
        finally:
            await connection.close()
        progress(f"saturated load: {tables} tables for {seconds:g} s ...")
        cpu_before = {service.name: service.cpu_seconds() for service in (stack.rules, stack.table)}
        full = await run_load(stack.table.address, stack.tokens, tables, seconds)
        cpu = {
            service.name: round(service.cpu_seconds() - cpu_before[service.name], 2)
            for service in (stack.rules, stack.table)
        }
        saturated = full.summary()
        half_rate = max(1.0, saturated["moves_per_s"] / 2)
        progress(f"half load: {half_rate:.0f} moves/s for {seconds:g} s ...")
        half = (
            await run_load(stack.table.address, stack.tokens, tables, seconds, half_rate)
        ).summary()
    return {
        "saturated": saturated,
        "half_load": half,
        "cpu_seconds_saturated": cpu,
        "jetstream_appends_per_s": {
            "sequential": round(sequential, 1),
            "64_in_flight": round(concurrent, 1),
        },
        "moves_vs_sequential_appends": round(saturated["moves_per_s"] / sequential, 3),
        "moves_vs_concurrent_appends": round(saturated["moves_per_s"] / concurrent, 3),
    }
