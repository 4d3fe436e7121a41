"""The system benchmark's report as tables for people; the JSON stays the record."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _load_row(label: str, run: dict[str, Any]) -> list[str]:
    return [
        label,
        f"{run['moves_per_s']:,.0f}",
        _number(run["move_latency_p50_ms"]),
        _number(run["move_latency_p95_ms"]),
        _number(run["move_latency_p99_ms"]),
        _number(run["projection_lag_p50_ms"]),
        _number(run["projection_lag_p99_ms"]),
        str(run["errors"]),
        str(run["games"]),
    ]


def render_system_report(report: dict[str, Any]) -> Group:
    """Loads (one row each), CPU per process, raw limits and ratios, targets."""
    loads = Table(title=f"cardtable bench: {report['game']}; {report.get('clients', 'poll')}")
    for column in (
        "tables",
        "moves/s",
        "move p50 ms",
        "p95 ms",
        "p99 ms",
        "lag p50 ms",
        "lag p99 ms",
        "errors",
        "games",
    ):
        loads.add_column(column, justify="right")
    for run in report["runs"]:
        loads.add_row(*_load_row(str(run["tables"]), run))
    if report.get("half_load"):
        half = report["half_load"]
        loads.add_row(*_load_row(f"{half['tables']} at half", half))

    cpu = Table(title="CPU ms per move, by process")
    names = list(report["runs"][0]["cpu_ms_per_move"]) if report["runs"] else []
    cpu.add_column("tables", justify="right")
    for name in names:
        cpu.add_column(name, justify="right")
    for run in report["runs"]:
        cpu.add_row(
            str(run["tables"]), *(_number(run["cpu_ms_per_move"].get(name), 2) for name in names)
        )

    raw = report["raw_limits"]
    best = max(report["runs"], key=lambda run: run["moves_per_s"])
    limits = Table(title=f"raw limits of this machine, and the best load ({best['tables']} tables)")
    for column in ("raw limit (one Python process)", "per second", "moves/s ÷ limit"):
        limits.add_column(column, justify="left" if column.startswith("raw") else "right")
    ratios = best["ratios"]
    for label, value, ratio in (
        (
            "JetStream appends, one at a time",
            raw["jetstream_appends_per_s"]["sequential"],
            ratios["vs_jetstream_sequential_appends"],
        ),
        (
            "JetStream appends, 64 in flight",
            raw["jetstream_appends_per_s"]["64_in_flight"],
            ratios["vs_jetstream_64_in_flight_appends"],
        ),
        (
            "PostgreSQL batched insert rows",
            raw["postgres_batched_inserts_rows_per_s"],
            ratios["vs_postgres_batched_insert_rows"],
        ),
        (
            "gRPC unary calls, one at a time",
            raw["grpc_unary_calls_per_s"]["sequential"],
            ratios["vs_grpc_unary_sequential"],
        ),
        (
            "gRPC unary calls, 64 in flight",
            raw["grpc_unary_calls_per_s"]["64_in_flight"],
            ratios["vs_grpc_unary_64_in_flight"],
        ),
    ):
        limits.add_row(label, f"{value:,.0f}", f"{ratio:.3f}")

    targets = report["targets"]
    met = report["targets_met"]
    below = report.get("under_latency_targets_at_best_load", {})
    lines = []
    for key in ("moves_per_s", "move_latency_p99_ms", "projection_lag_p99_ms"):
        verdict = ("met     " if met[key] else "NOT met ", "green" if met[key] else "red")
        detail = f"{key} target {targets[key]:g}, measured {_number(best.get(key))}"
        if not met[key] and below.get(key):
            detail += " (under the target, but at a lower rate than the target's)"
        lines.append(Text.assemble(verdict, detail))
    note = Text(
        "move latency is measured by the clients; projection lag comes from the scoring "
        "service's histogram (append to commit), interpolated inside its buckets",
        style="dim",
    )
    return Group(loads, cpu, limits, *lines, note)
