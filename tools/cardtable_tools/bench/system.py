"""``cardtable bench``: the whole system under load, beside the machine's raw limits.

One run starts NATS, PostgreSQL and the four services, measures the raw limits (JetStream
appends, batched inserts, unary gRPC calls from one Python process), then plays ``N`` tables of
computer players through the table service for ``T`` seconds for each ``N`` asked for, as fast
as the system answers (throughput). Then it offers the target rate, and half of it, paced (the
issues' latency targets hold at those rates, not at saturation). For each load it reports moves per
second, move latency (client side), projection lag (the scoring service's histogram, append to
commit), CPU seconds per process and errors; every rate is also given as a ratio to the raw
limits measured in the same run, because absolute figures move with the machine's load.

Last, the move floor (``move_floor``): the same hops with nothing of ours in them, at the best
load's table count and the same offered rates, so that each figure can be read against the
lowest any implementation could reach on this machine that hour.

``quotas=("on", "off")`` plays each load (the paced ones too) twice, once with the table
service's quotas on and once off (``quota_sides``), each side on a stack of its own, and
compares their CPU per move. Every load reports the quota checks the table service made and
the refusals it gave.

``table_path=True`` runs only what issue #4's targets name: NATS, the rules and table services
and the clients; no scoring service, PostgreSQL or bots, so no projection lag either.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import asyncpg

from cardtable.platform.nats import connect_nats
from cardtable.scoring_service.database import schema_url
from cardtable.scoring_service.writer import read_position
from cardtable_tools.bench.move_floor import measure_floor
from cardtable_tools.bench.profiles import Profiler
from cardtable_tools.bench.quota_sides import SIDES, SideBySide, counts_since, quota_counts
from cardtable_tools.bench.raw_limits import (
    grpc_unary_rate,
    jetstream_append_rate,
    postgres_insert_rate,
    python_speed,
)
from cardtable_tools.bench.scrape import (
    histogram_since,
    sample_sum,
    scrape_histogram,
    scrape_metrics,
    to_ms,
)
from cardtable_tools.bench.stack import (
    SERVICES,
    SystemStack,
    process_tree_cpu_seconds,
    system_stack,
)
from cardtable_tools.bench.table_load import WARMUP_SHARE, LoadResult, run_load

LAG_HISTOGRAM = "scoring_projection_lag_seconds"
SIGNATURES = "cardtable_log_signatures_total"
BATCHES_SIGNED = "cardtable_log_batches_signed_total"
#: How each client model learns that it is its seat's turn (the report says which ran).
CLIENT_DESCRIPTIONS = {
    "turns": "turns: each client streams its seat's turns (WatchTurns), then MakeMove",
    "poll": "poll: each client reads its view (GetTable) before each MakeMove",
    "pipeline": (
        "pipeline: as poll, with every client's CreateTable, JoinTable, GetTable and "
        "MakeMove over one TableService.Pipeline stream (one backend serving all players)"
    ),
}
#: The issues' targets for sustained load on this machine: #9's at the target rate, and #4's
#: latency at half of it.
TARGETS = {
    "moves_per_s": 1000.0,
    "move_latency_p99_ms": 50.0,
    "projection_lag_p99_ms": 500.0,
    "move_latency_p99_ms_at_half_rate": 20.0,
}
#: Issue #4's setup: "everything (NATS, rules, table, clients)" on the machine.
TABLE_PATH_SERVICES = ("rules", "table")
#: The targets that need the scoring service (not judged on the table path alone).
PROJECTION_TARGETS = frozenset({"projection_lag_p99_ms"})
#: A load's figures that come from the scoring service.
PROJECTION_FIGURES = (
    "projection_lag_p50_ms",
    "projection_lag_p99_ms",
    "projected_batches",
    "projection_caught_up_after_s",
)
#: A paced run sustained its offered rate if it made at least this share of it.
SUSTAINED_SHARE = 0.95
#: How long the projection may take to catch up after a run before the bench gives up on it.
CATCH_UP_LIMIT_SECONDS = 120.0

Progress = Callable[[str], None]
Measurement = dict[str, Any]
#: Seconds of measurement done so far, and in all: the loads last as long as they are told.
MeasuredSeconds = Callable[[float, float], None]


def planned_seconds(
    loads: int, seconds: float, raw_seconds: float, *, paced: bool, floor: bool, sides: int = 1
) -> float:
    """The seconds a bench spends measuring: the raw limits (four timed rates and the Python
    loop), each load on each side, the two paced loads, and the floor's runs. Starting the
    stacks and waiting for the projection to catch up come on top.

    >>> planned_seconds(3, 20, 3, paced=True, floor=True)
    173.0
    """
    played = (loads + (2 if paced else 0)) * sides * seconds
    return (
        _raw_limit_seconds(raw_seconds) + played + (_floor_seconds(seconds, paced) if floor else 0)
    )


def _raw_limit_seconds(raw_seconds: float) -> float:
    """Two JetStream and two gRPC rates of ``raw_seconds`` each, and the Python loop."""
    return 4 * raw_seconds + min(raw_seconds, 1.0)


def _floor_seconds(seconds: float, paced: bool) -> float:
    """The floor at saturation and, when paced, at the target rate and half of it."""
    return (3 if paced else 1) * seconds


class _Measured:
    """Measurement seconds done out of those planned, told to a :data:`MeasuredSeconds`."""

    def __init__(self, planned: float, tell: MeasuredSeconds | None) -> None:
        self.planned, self.done, self._tell = planned, 0.0, tell
        self.add(0.0)

    def add(self, seconds: float) -> None:
        self.done += seconds
        if self._tell is not None:
            self._tell(min(self.done, self.planned), self.planned)

    def after(
        self, load: Callable[[SystemStack], Awaitable[Measurement]], seconds: float
    ) -> Callable[[SystemStack], Awaitable[Measurement]]:
        """``load``, counting its ``seconds`` once it is over."""

        async def measured(stack: SystemStack) -> Measurement:
            result = await load(stack)
            self.add(seconds)
            return result

        return measured


async def measure_raw_limits(stack: SystemStack, seconds: float, say: Progress) -> dict[str, Any]:
    """Each raw limit one at a time, with the services idle."""
    say("raw limits: JetStream appends ...")
    connection = await connect_nats(stack.nats_url, name="bench-raw")
    try:
        appends = {
            "sequential": await jetstream_append_rate(connection.jetstream, seconds, 1),
            "64_in_flight": await jetstream_append_rate(connection.jetstream, seconds, 64),
        }
    finally:
        await connection.close()
    inserts = None
    if stack.database_url:  # not on the table path alone
        say("raw limits: PostgreSQL batched inserts ...")
        inserts = round(await postgres_insert_rate(stack.database_url), 1)
    say("raw limits: gRPC unary calls ...")
    unary = {
        "sequential": await grpc_unary_rate(seconds, 1),
        "64_in_flight": await grpc_unary_rate(seconds, 64),
    }
    say("machine speed: a fixed Python loop ...")
    return {
        "jetstream_appends_per_s": {key: round(value, 1) for key, value in appends.items()},
        "postgres_batched_inserts_rows_per_s": inserts,
        "grpc_unary_calls_per_s": {key: round(value, 1) for key, value in unary.items()},
        "python_million_steps_per_cpu_s": round(python_speed(min(seconds, 1.0)), 2),
    }


class CpuMeter:
    """CPU seconds of each process of the stack, and of this process (the clients)."""

    def __init__(self, stack: SystemStack) -> None:
        self._stack = stack
        self._before = self._read()

    def restart(self) -> None:
        """Count from now on (the warm-up of a load is over)."""
        self._before = self._read()

    def _read(self) -> dict[str, float]:
        readings = {name: service.cpu_seconds() for name, service in self._stack.services.items()}
        for name, pid in self._stack.server_pids.items():
            readings[name] = process_tree_cpu_seconds(pid)
        readings["clients"] = time.process_time()
        return readings

    def used(self) -> dict[str, float]:
        after = self._read()
        return {name: round(after[name] - self._before.get(name, 0.0), 2) for name in after}


async def last_sequence(stack: SystemStack) -> int:
    """The event stream's last sequence now."""
    connection = await connect_nats(stack.nats_url, name="bench-last-sequence")
    try:
        return int((await connection.jetstream.stream_info(stack.stream)).state.last_seq)
    finally:
        await connection.close()


async def wait_for_projection(stack: SystemStack, limit_seconds: float) -> float:
    """Seconds until the scoring projection has committed the stream's last message."""
    started = time.perf_counter()
    last = await last_sequence(stack)
    database = await asyncpg.connect(schema_url(stack.database_url, "scoring"))
    try:
        while time.perf_counter() - started < limit_seconds:
            if await read_position(database, stack.stream) >= last:
                break
            await asyncio.sleep(0.05)
    finally:
        await database.close()
    return time.perf_counter() - started


async def measure_load(
    stack: SystemStack,
    tables: int,
    seconds: float,
    target_moves_per_s: float | None = None,
    clients: str = "pipeline",
    profiler: Profiler | None = None,
) -> dict[str, Any]:
    """One load: ``tables`` tables for ``seconds``, and what it cost and caused; with a
    ``profiler``, where each service's CPU went while it was measured."""
    scoring = stack.services.get("scoring")
    lag_before = await scrape_histogram(scoring.metrics_port, LAG_HISTOGRAM) if scoring else None
    sequence_before = await last_sequence(stack)
    quotas_before = await quota_counts(stack.services["table"].metrics_port)
    signing_before = await signing_counts(stack.services["table"].metrics_port)
    cpu = CpuMeter(stack)
    sampling: list[asyncio.Task[None]] = []

    def warmed_up() -> None:
        cpu.restart()
        if profiler is not None:
            measured = seconds * (1 - WARMUP_SHARE)
            sampling.append(asyncio.ensure_future(profiler.start(f"{tables}-tables", measured)))

    try:
        result: LoadResult = await run_load(
            stack.table_address,
            stack.tokens,
            tables,
            seconds,
            target_moves_per_s,
            clients,
            on_warmed_up=warmed_up,
        )
    except BaseException:
        if profiler is not None:
            await profiler.stop()
        raise
    cpu_used = cpu.used()
    profiles = None
    if profiler is not None and sampling:
        await sampling[0]
        profiles = await profiler.finish()
    quotas = counts_since(quotas_before, await quota_counts(stack.services["table"].metrics_port))
    signing_after = await signing_counts(stack.services["table"].metrics_port)
    signatures, signed = (
        after - before for after, before in zip(signing_after, signing_before, strict=True)
    )
    if scoring is None or lag_before is None:  # the table path alone: nothing projects
        appended = await last_sequence(stack) - sequence_before
        projection: dict[str, Any] = dict.fromkeys(PROJECTION_FIGURES)
    else:
        catch_up = await wait_for_projection(stack, CATCH_UP_LIMIT_SECONDS)
        appended = await last_sequence(stack) - sequence_before
        lag = await histogram_since(scoring.metrics_port, LAG_HISTOGRAM, lag_before, appended)
        projection = {
            "projection_lag_p50_ms": to_ms(lag.quantile(0.50)),
            "projection_lag_p99_ms": to_ms(lag.quantile(0.99)),
            "projected_batches": int(lag.count),
            "projection_caught_up_after_s": round(catch_up, 2),
        }
    return {
        **result.summary(),
        "target_moves_per_s": target_moves_per_s,
        **projection,
        "appended_batches": appended,
        "quota_checks": quotas["checks"],
        "quota_refusals": quotas["refusals"],
        "batches_per_signature": round(signed / signatures, 2) if signatures else None,
        "cpu_seconds": cpu_used,
        **({"profiles": profiles} if profiles is not None else {}),
        "cpu_ms_per_move": {
            name: round(used * 1000 / result.moves, 2) if result.moves else None
            for name, used in cpu_used.items()
        },
    }


async def signing_counts(metrics_port: int) -> tuple[float, float]:
    """The table service's signatures made and batches signed so far (one signature covers the
    batches ready together: log_signing)."""
    text = await scrape_metrics(metrics_port)
    return sample_sum(text, SIGNATURES), sample_sum(text, BATCHES_SIGNED)


def _ratios(moves_per_s: float, raw: dict[str, Any]) -> dict[str, float | None]:
    """Moves per second as a share of each raw limit (one move = one acknowledged append,
    a few unary calls, a few projected rows)."""
    return {
        "vs_jetstream_sequential_appends": round(
            moves_per_s / raw["jetstream_appends_per_s"]["sequential"], 3
        ),
        "vs_jetstream_64_in_flight_appends": round(
            moves_per_s / raw["jetstream_appends_per_s"]["64_in_flight"], 3
        ),
        "vs_postgres_batched_insert_rows": (
            round(moves_per_s / raw["postgres_batched_inserts_rows_per_s"], 3)
            if raw["postgres_batched_inserts_rows_per_s"]
            else None
        ),
        "vs_grpc_unary_sequential": round(
            moves_per_s / raw["grpc_unary_calls_per_s"]["sequential"], 3
        ),
        "vs_grpc_unary_64_in_flight": round(
            moves_per_s / raw["grpc_unary_calls_per_s"]["64_in_flight"], 3
        ),
    }


async def system_bench(
    table_counts: list[int],
    seconds: float,
    say: Progress = lambda _: None,
    *,
    raw_seconds: float = 3.0,
    paced: bool = True,
    log_dir: Path | None = None,
    clients: str = "pipeline",
    table_path: bool = False,
    floor: bool = True,
    quotas: Sequence[str] = ("on",),
    measured: MeasuredSeconds | None = None,
    profile_dir: Path | None = None,
) -> dict[str, Any]:
    """The whole benchmark; a JSON-able report (see the module docstring).

    ``measured`` is told the seconds of measurement done and planned (:func:`planned_seconds`)
    as each measurement ends, for a progress display.

    ``clients``: how the simulated players learn it is their turn (``table_load``).
    ``table_path``: only NATS, rules, table and clients (issue #4's setup).
    ``floor``: measure the move floor too (at saturation, and at the paced rates if paced).
    ``quotas``: the table service's quotas ``on``, ``off``, or each load (paced ones too) on
    both sides; the first side's runs are the report's runs.
    ``profile_dir``: sample each service during each unpaced load (``profiles``), one side only.
    """
    if profile_dir is not None and len(quotas) > 1:
        raise ValueError("--profile samples one stack's services: give one --quotas side")
    services = TABLE_PATH_SERVICES if table_path else SERVICES
    targets = {
        key: value
        for key, value in TARGETS.items()
        if not (table_path and key in PROJECTION_TARGETS)
    }
    progress = _Measured(
        planned_seconds(
            len(table_counts), seconds, raw_seconds, paced=paced, floor=floor, sides=len(quotas)
        ),
        measured,
    )
    async with contextlib.AsyncExitStack() as running:
        stacks = {}
        for side in quotas:
            if len(quotas) > 1:
                say(f"starting a stack with quotas {side} ...")
            stacks[side] = await running.enter_async_context(
                system_stack(
                    _side_log_dir(log_dir, side, len(quotas)),
                    services=services,
                    extra_settings={"table": SIDES[side]},
                )
            )
        stack = stacks[quotas[0]]
        raw = await measure_raw_limits(stack, raw_seconds, say)
        progress.add(_raw_limit_seconds(raw_seconds))
        sides = SideBySide(stacks, say)
        profiler = (
            Profiler(
                profile_dir,
                {name: service.process.pid for name, service in stack.services.items()},
            )
            if profile_dir is not None
            else None
        )
        runs = []
        for tables in table_counts:
            run = await sides.measure(
                progress.after(
                    partial(
                        measure_load,
                        tables=tables,
                        seconds=seconds,
                        clients=clients,
                        profiler=profiler,
                    ),
                    seconds,
                ),
                f"load: {tables} tables for {seconds:g} s",
            )
            run["ratios"] = _ratios(run["moves_per_s"], raw)
            runs.append(run)
        best = max(runs, key=lambda run: run["moves_per_s"])
        paced_runs = []
        if paced:
            for rate in (TARGETS["moves_per_s"], TARGETS["moves_per_s"] / 2):
                paced_runs.append(
                    await sides.measure(
                        progress.after(
                            partial(
                                measure_load,
                                tables=best["tables"],
                                seconds=seconds,
                                target_moves_per_s=rate,
                                clients=clients,
                            ),
                            seconds,
                        ),
                        f"paced: {best['tables']} tables offering {rate:.0f} moves/s",
                    )
                )
        floor_report = None
        if floor:
            say(f"floor: the same hops with nothing of ours, {best['tables']} tables ...")
            floor_report = await _measure_floor(stack, best["tables"], seconds, paced)
            progress.add(_floor_seconds(seconds, paced))
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "nats": "NATS_URL" if "NATS_URL" in os.environ else "embedded wheel",
            "postgres": (
                "not used"
                if table_path
                else "DATABASE_URL"
                if "DATABASE_URL" in os.environ
                else "embedded wheel"
            ),
        },
        "services": list(services),
        "game": "hearts (quick games), one client per seat, random legal moves",
        "clients": CLIENT_DESCRIPTIONS[clients],
        "seconds_per_run": seconds,
        "raw_limits": raw,
        "runs": runs,
        "paced": paced_runs,
        "best": {"tables": best["tables"], "moves_per_s": best["moves_per_s"]},
        "targets": targets,
        "sustained_share": SUSTAINED_SHARE,
        "targets_met": {
            key: met for key, met in targets_met(best, paced_runs).items() if key in targets
        },
        "floor": floor_report,
        "quotas": sides.report(),
    }


def _side_log_dir(log_dir: Path | None, side: str, sides: int) -> Path | None:
    """Where a side's services write their logs: a folder each when there are two sides."""
    if log_dir is None or sides == 1:
        return log_dir
    (log_dir / f"quotas-{side}").mkdir(parents=True, exist_ok=True)
    return log_dir / f"quotas-{side}"


#: The targets the floor is judged against: it moves, it projects nothing.
FLOOR_TARGETS = ("moves_per_s", "move_latency_p99_ms", "move_latency_p99_ms_at_half_rate")


async def _measure_floor(
    stack: SystemStack, tables: int, seconds: float, paced: bool
) -> dict[str, Any]:
    """The move floor as fast as it answers, then (``paced``) at the target rate and half."""
    rates: list[float | None] = [None]  # as many as _floor_seconds counts
    if paced:
        rates += [TARGETS["moves_per_s"], TARGETS["moves_per_s"] / 2]
    connection = await connect_nats(stack.nats_url, name="bench-floor")
    try:
        report = await measure_floor(
            stack.nats_url,
            connection.jetstream,
            tables,
            seconds,
            rates,
            nats_pid=stack.server_pids.get("nats"),
        )
    finally:
        await connection.close()
    saturated, *paced_runs = report["runs"]
    met = targets_met(saturated, paced_runs)
    report["targets_met"] = {key: met[key] for key in FLOOR_TARGETS}
    return report


def _under(value: float | None, limit: float) -> bool:
    return value is not None and value < limit


def sustained(run: dict[str, Any]) -> bool:
    """Whether a paced run made (nearly) the rate it offered."""
    offered = run.get("target_moves_per_s")
    return offered is not None and run["moves_per_s"] >= SUSTAINED_SHARE * offered


def targets_met(best: dict[str, Any], paced_runs: list[dict[str, Any]]) -> dict[str, bool]:
    """Throughput is judged at the best load; each latency target at the paced run of its
    rate, and only if that run sustained the rate (no paced runs: not met)."""

    def at_rate(rate: float) -> dict[str, Any] | None:
        for run in paced_runs:
            if run.get("target_moves_per_s") == rate and sustained(run):
                return run
        return None

    full = at_rate(TARGETS["moves_per_s"])
    half = at_rate(TARGETS["moves_per_s"] / 2)
    return {
        "moves_per_s": best["moves_per_s"] >= TARGETS["moves_per_s"],
        "move_latency_p99_ms": full is not None
        and _under(full["move_latency_p99_ms"], TARGETS["move_latency_p99_ms"]),
        "projection_lag_p99_ms": full is not None
        and _under(full.get("projection_lag_p99_ms"), TARGETS["projection_lag_p99_ms"]),
        "move_latency_p99_ms_at_half_rate": half is not None
        and _under(half["move_latency_p99_ms"], TARGETS["move_latency_p99_ms_at_half_rate"]),
    }
