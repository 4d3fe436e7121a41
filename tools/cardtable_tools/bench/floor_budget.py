"""``cardtable bench-floor``: how much work per move the latency targets leave room for.

The move floor (``move_floor``) is a move's hops with nothing of ours in them. Here it runs
again with stand-in CPU work added to every call its servers answer, a step at a time, and
at each step it is offered the target rates. Where a target's p99 first fails tells how much
of our own CPU per move (engine, protobuf, tokens, logs ...) the target can absorb on this
machine; ``cardtable bench`` prints our own CPU per move beside the floor's, to compare.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable_tools.bench.move_floor import CALLS_PER_MOVE, measure_floor
from cardtable_tools.bench.system import SUSTAINED_SHARE, TARGETS
from cardtable_tools.servers.dev_servers import async_dev_servers

#: Each rate a target holds at, and that target's p99 limit (issue #9's, and #4's at half).
P99_LIMITS_MS = {
    TARGETS["moves_per_s"]: TARGETS["move_latency_p99_ms"],
    TARGETS["moves_per_s"] / 2: TARGETS["move_latency_p99_ms_at_half_rate"],
}


@contextlib.asynccontextmanager
async def _nats() -> AsyncIterator[tuple[str, NatsConnection, int | None]]:
    """``NATS_URL``'s server, else an embedded one (whose CPU is then counted too)."""
    url = os.environ.get("NATS_URL")
    async with contextlib.AsyncExitStack() as stack:
        pid = None
        if not url:
            servers = await stack.enter_async_context(async_dev_servers(nats=True))
            url, pid = servers.nats_url, servers.nats.pid if servers.nats else None
        connection = await connect_nats(url, name="bench-floor")
        stack.push_async_callback(connection.close)
        yield url, connection, pid


def within_target(run: dict[str, Any]) -> bool | None:
    """Whether a paced run met its rate's p99 target (None: no target at that rate)."""
    rate = run["target_moves_per_s"]
    limit = P99_LIMITS_MS.get(rate)
    if limit is None:
        return None
    sustained: bool = run["moves_per_s"] >= SUSTAINED_SHARE * rate
    fast_enough: bool = run["move_latency_p99_ms"] < limit
    return sustained and fast_enough


async def floor_budget(
    tables: int,
    seconds: float,
    rates: list[float],
    work_us_per_move: list[float],
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The floor at each step of work per move, offered each rate: a JSON-able report."""
    steps = []
    async with _nats() as (nats_url, connection, nats_pid):
        for work in work_us_per_move:
            say(f"floor with {work:g} µs of work per move, {tables} tables ...")
            report = await measure_floor(
                nats_url,
                connection.jetstream,
                tables,
                seconds,
                list(rates),
                nats_pid=nats_pid,
                work_us_per_call=work / CALLS_PER_MOVE,
            )
            for run in report["runs"]:
                run["within_target"] = within_target(run)
            steps.append(report)
    return {
        "tables": tables,
        "seconds_per_run": seconds,
        "p99_limits_ms": {f"{rate:g}": limit for rate, limit in P99_LIMITS_MS.items()},
        "steps": steps,
    }
