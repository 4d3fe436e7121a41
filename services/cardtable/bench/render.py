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
    loads.add_column("tables", justify="right", no_wrap=True)
    for column in (
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
    for run in report.get("paced", []):
        label = f"{run['tables']} at {run['target_moves_per_s']:,.0f}/s"
        loads.add_row(*_load_row(label, run))

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
        limits.add_row(label, _number(value, 0), _number(ratio, 3))

    lines = [_verdict(report, key) for key in report["targets"]]
    services = report.get("services")
    note = Text(
        "move latency is measured by the clients; projection lag comes from the scoring "
        "service's histogram (append to commit), interpolated inside its buckets"
        + (f"; services running: {', '.join(services)}" if services else ""),
        style="dim",
    )
    return Group(loads, cpu, limits, *lines, note)


#: Where each target is judged, and the figure compared with it.
_JUDGED_AT = {
    "moves_per_s": ("the best load", None, "moves_per_s"),
    "move_latency_p99_ms": ("paced to the target rate", 1.0, "move_latency_p99_ms"),
    "projection_lag_p99_ms": ("paced to the target rate", 1.0, "projection_lag_p99_ms"),
    "move_latency_p99_ms_at_half_rate": ("paced to half of it", 0.5, "move_latency_p99_ms"),
}


def _verdict(report: dict[str, Any], key: str) -> Text:
    """One target: met or not, where it was judged, and what was measured there."""
    met = report["targets_met"][key]
    where, share, figure = _JUDGED_AT[key]
    if share is None:
        run: dict[str, Any] | None = max(report["runs"], key=lambda run: run["moves_per_s"])
    else:
        rate = report["targets"]["moves_per_s"] * share
        run = next((r for r in report.get("paced", []) if r["target_moves_per_s"] == rate), None)
    detail = f"{key} target {report['targets'][key]:g} ({where}): "
    if run is None:
        detail += "not measured"
    else:
        detail += f"measured {_number(run.get(figure))}"
        if share is not None:
            detail += (
                f" at {run['moves_per_s']:,.0f} of {run['target_moves_per_s']:,.0f} moves/s offered"
            )
    verdict = ("met     " if met else "NOT met ", "green" if met else "red")
    return Text.assemble(verdict, detail)
