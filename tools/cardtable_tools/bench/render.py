"""The system benchmark's report as tables for people; the JSON stays the record."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from cardtable_tools.bench.cpu_kinds import KINDS, OTHER, TRANSPORT_KINDS


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


def _labelled_runs(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each load with its label: its table count, and the rate it offered if paced."""
    labelled = [(str(run["tables"]), run) for run in report["runs"]]
    for run in report.get("paced", []):
        labelled.append((f"{run['tables']} at {run['target_moves_per_s']:,.0f}/s", run))
    return labelled


def _per_process_table(title: str, report: dict[str, Any], key: str, digits: int) -> Table:
    """One row per load, one column per process and their total, of the figure at ``key``."""
    table = Table(title=title)
    names = list(report["runs"][0].get(key, {})) if report["runs"] else []
    table.add_column("load", justify="right")
    for name in (*names, "total"):
        table.add_column(name, justify="right")
    for label, run in _labelled_runs(report):
        per_process = run.get(key, {})  # reports from before a figure existed lack it
        known = [value for value in per_process.values() if value is not None]
        table.add_row(
            label,
            *(_number(per_process.get(name), digits) for name in names),
            _number(sum(known) if known else None, digits),
        )
    return table


def render_system_report(report: dict[str, Any]) -> Group:
    """Loads (one row each), CPU per process, raw limits and ratios, targets."""
    loads = _numbers_table(
        f"cardtable bench: {report['game']}; {report.get('clients', 'poll')}",
        "tables",
        ("moves/s", "move p50 ms", "p95 ms", "p99 ms", "lag p50 ms", "lag p99 ms"),
        ("errors", "games"),
    )
    for label, run in _labelled_runs(report):
        loads.add_row(*_load_row(label, run))

    cpu = _per_process_table("CPU ms per move, by process", report, "cpu_ms_per_move", 2)
    cpu_seconds = _per_process_table(
        "CPU seconds, by process, over each load's counted seconds", report, "cpu_seconds", 1
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
    speed = raw.get("python_million_steps_per_cpu_s")  # absent from reports before it
    if speed is not None:
        limits.add_row("machine speed: Python loop, M steps/CPU s", _number(speed, 1), "")

    tables: list[Table] = [loads, cpu, cpu_seconds, limits]
    compared = _quotas_table(report)
    if compared is not None:
        tables.append(compared)
    if report.get("floor"):
        tables.append(_floor_table(report))
    if best.get("profiles"):
        tables.append(_profile_table(best))
        tables.append(_kinds_table(best, report.get("floor")))
    lines = [_verdict(report, key) for key in report["targets"]]
    lines.extend(_quota_lines(report))
    services = report.get("services")
    note = Text(
        "move latency is measured by the clients; projection lag comes from the scoring "
        "service's histogram (append to commit), interpolated inside its buckets"
        + (f"; services running: {', '.join(services)}" if services else ""),
        style="dim",
    )
    return Group(*tables, *lines, note)


def _compared_loads(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The loads measured with quotas on and off (none in reports from before the option)."""
    quotas = report.get("quotas") or {}
    if len(quotas.get("sides", [])) < 2:
        return []
    return list(quotas["loads"])


def _quotas_table(report: dict[str, Any]) -> Table | None:
    """CPU per move with quotas on and off, side by side, per load; None if not compared."""
    loads = _compared_loads(report)
    if not loads:
        return None
    table = _numbers_table(
        "CPU ms per move with quotas on and off (each side on a stack of its own)",
        "load",
        ("all on", "all off", "on ÷ off"),
        ("table on", "table off", "on ÷ off"),
        ("moves/s on", "moves/s off"),
    )
    for load in loads:
        on, off = load["on"], load["off"]
        table.add_row(
            _load_label(load),
            _number(on["cpu_ms_per_move"], 3),
            _number(off["cpu_ms_per_move"], 3),
            _number(load["cpu_ratio_on_to_off"], 3),
            _number(on["table_cpu_ms_per_move"], 3),
            _number(off["table_cpu_ms_per_move"], 3),
            _number(load["table_cpu_ratio_on_to_off"], 3),
            f"{on['moves_per_s']:,.0f}",
            f"{off['moves_per_s']:,.0f}",
        )
    return table


def _load_label(load: dict[str, Any]) -> str:
    """A load's table count, and the rate it offered if paced."""
    rate = load.get("target_moves_per_s")
    tables = f"{load['tables']} tables"
    return tables if rate is None else f"{tables} at {rate:,.0f}/s"


def _within(within: bool) -> tuple[str, str]:
    return ("within  ", "green") if within else ("APART   ", "red")


def _quota_lines(report: dict[str, Any]) -> list[Text]:
    """Per compared load: the ratio against its bound, and the checks the "on" side made;
    the ratio over all of them; and any load whose players a quota refused (the bench's
    players are never meant to be)."""
    lines = []
    quotas = report.get("quotas") or {}
    bound = quotas.get("max_apart", 0.0)
    loads = _compared_loads(report)
    for load in loads:
        within, ran = load["within_bound"], load["checks_ran"]
        checks = load["on"]["quota_checks"]
        lines.append(
            Text.assemble(
                _within(within),
                f"quotas on ÷ off at {_load_label(load)}: CPU per move "
                f"{_number(load['cpu_ratio_on_to_off'], 3)} (bound {1 + bound:g}); ",
                (
                    f"with quotas on the checks ran: {checks['mutation_rate']:,} mutating calls, "
                    f"{checks['open_tables_per_player']:,} new tables, "
                    f"{checks['watch_streams']:,} watch streams, "
                    f"{load['on']['quota_refusals']} refused",
                    "" if ran else "red",
                ),
            )
        )
    overall = quotas.get("cpu_ratio_on_to_off_geometric_mean")
    if len(loads) > 1 and overall is not None:
        lines.append(
            Text.assemble(
                _within(abs(overall - 1) <= bound),
                f"quotas on ÷ off over the {len(loads)} loads (geometric mean): CPU per move "
                f"{overall:.3f} (bound {1 + bound:g})",
            )
        )
    for label, run in _labelled_runs(report):
        if run.get("quota_refusals"):
            lines.append(
                Text(f"{run['quota_refusals']} calls refused by quotas at {label}", style="red")
            )
    return lines


#: Where each target is judged, and the figure compared with it.
_JUDGED_AT = {
    "moves_per_s": ("the best load", None, "moves_per_s"),
    "move_latency_p99_ms": ("paced to the target rate", 1.0, "move_latency_p99_ms"),
    "projection_lag_p99_ms": ("paced to the target rate", 1.0, "projection_lag_p99_ms"),
    "move_latency_p99_ms_at_half_rate": ("paced to half of it", 0.5, "move_latency_p99_ms"),
}


def _run_at(runs: list[dict[str, Any]], rate: float | None) -> dict[str, Any] | None:
    """The run offered ``rate`` moves/s (None: the fastest of those run unpaced)."""
    if rate is None:
        unpaced = [run for run in runs if run.get("target_moves_per_s") is None]
        return max(unpaced, key=lambda run: run["moves_per_s"]) if unpaced else None
    return next((run for run in runs if run.get("target_moves_per_s") == rate), None)


def _numbers_table(title: str, label: str, *column_groups: tuple[str, ...]) -> Table:
    """A table of a label column, then columns of right-aligned figures."""
    table = Table(title=title)
    table.add_column(label, justify="right", no_wrap=True)
    for group in column_groups:
        for column in group:
            table.add_column(column, justify="right")
    return table


def _floor_table(report: dict[str, Any]) -> Table:
    """Each floor run beside the system's run at the same tables and offered rate."""
    floor = report["floor"]
    table = _numbers_table(
        f"the move floor: a move's hops with nothing of ours in them ({floor['tables']} "
        "tables), beside the system",
        "offered",
        ("floor moves/s", "floor p50 ms", "floor p99 ms", "floor CPU ms/move"),
        ("system moves/s", "system p99 ms", "system CPU ms/move", "own CPU ms/move"),
    )
    for run in floor["runs"]:
        rate = run["target_moves_per_s"]
        # The floor runs at the best load's tables: the fastest unpaced run, and the paced ones.
        system = _run_at(report["runs"] + report.get("paced", []), rate)
        table.add_row(
            "unpaced" if rate is None else f"{rate:,.0f}/s",
            f"{run['moves_per_s']:,.0f}",
            _number(run["move_latency_p50_ms"]),
            _number(run["move_latency_p99_ms"]),
            _number(_total_cpu(run), 2),
            "-" if system is None else f"{system['moves_per_s']:,.0f}",
            "-" if system is None else _number(system["move_latency_p99_ms"]),
            "-" if system is None else _number(_total_cpu(system), 2),
            _number(_own_cpu(system, run), 2),
        )
    return table


def _own_cpu(system: dict[str, Any] | None, floor: dict[str, Any]) -> float | None:
    """What our code costs per move beyond the hops themselves: the system's CPU per move less
    the floor's at the same load (what ``cardtable bench-floor`` finds room for)."""
    system_cpu = None if system is None else _total_cpu(system)
    floor_cpu = _total_cpu(floor)
    if system_cpu is None or floor_cpu is None:
        return None
    return system_cpu - floor_cpu


def _total_cpu(run: dict[str, Any]) -> float | None:
    """CPU ms per move over every process measured (None when no move was made)."""
    shares = [value for value in run["cpu_ms_per_move"].values() if value is not None]
    return sum(shares) if shares else None


def _verdict(report: dict[str, Any], key: str) -> Text:
    """One target: met or not, where it was judged, what was measured there, and what the
    move floor made at the same place (when it was measured)."""
    met = report["targets_met"][key]
    where, share, figure = _JUDGED_AT[key]
    rate = None if share is None else report["targets"]["moves_per_s"] * share
    runs = report["runs"] if share is None else report.get("paced", [])
    run = _run_at(runs, rate)
    detail = f"{key} target {report['targets'][key]:g} ({where}): "
    if run is None:
        detail += "not measured"
    else:
        detail += f"measured {_number(run.get(figure))}"
        if share is not None:
            detail += (
                f" at {run['moves_per_s']:,.0f} of {run['target_moves_per_s']:,.0f} moves/s offered"
            )
    floor = report.get("floor")
    floor_run = _run_at(floor["runs"], rate) if floor and key in floor["targets_met"] else None
    if floor_run is not None:
        detail += f"; the floor: {_number(floor_run.get(figure))}"
        if share is not None:
            detail += f" at {floor_run['moves_per_s']:,.0f}"
    verdict = ("met     " if met else "NOT met ", "green" if met else "red")
    return Text.assemble(verdict, detail)


def render_floor_budget(report: dict[str, Any]) -> Table:
    """One row per step of work and offered rate; whether that rate's p99 target held."""
    table = _numbers_table(
        f"the move floor with stand-in work per move ({report['tables']} tables)",
        "work µs/move",
        ("offered/s", "moves/s", "p50 ms", "p99 ms", "CPU ms/move"),
        ("p99 limit ms", "held"),
    )
    for step in report["steps"]:
        for run in step["runs"]:
            held = run["within_target"]
            limit = report["p99_limits_ms"].get(f"{run['target_moves_per_s']:g}")
            table.add_row(
                f"{step['work_us_per_move']:,.0f}",
                f"{run['target_moves_per_s']:,.0f}",
                f"{run['moves_per_s']:,.0f}",
                _number(run["move_latency_p50_ms"]),
                _number(run["move_latency_p99_ms"]),
                _number(_total_cpu(run), 2),
                "-" if limit is None else f"{limit:g}",
                "-" if held is None else ("met" if held else "NOT met"),
            )
    return table


def _profile_table(run: dict[str, Any]) -> Table:
    """Each service's busiest functions at one load, from ``bench --profile``'s samples."""
    table = Table(title=f"where each service's CPU went at {run['tables']} tables (py-spy)")
    for column in ("service", "function (own code)", "own %", "with callees %"):
        table.add_column(column, justify="left" if column.startswith(("s", "f")) else "right")
    for name, profile in sorted(run["profiles"].items()):
        service = name.rsplit("-", 1)[-1]
        if "error" in profile:
            table.add_row(service, f"not sampled: {profile['error']}", "", "")
            continue
        for function, own, total in profile["top"][:6]:
            table.add_row(service, function, f"{own * 100:.1f}", f"{total * 100:.1f}")
            service = ""
    return table


def _kinds_table(run: dict[str, Any], floor: dict[str, Any] | None) -> Table:
    """A move's CPU in each service by kind of work (its profile's shares times the service's
    CPU per move), beside the floor's processes at the same load where it ran."""
    services = {
        name.rsplit("-", 1)[-1]: profile.get("kinds") or {}
        for name, profile in sorted(run["profiles"].items())
        if run["cpu_ms_per_move"].get(name.rsplit("-", 1)[-1])
    }
    table = _numbers_table(
        f"a move's CPU by kind of work at {run['tables']} tables, ms per move (py-spy shares "
        "times each service's CPU)",
        "kind",
        (*services, "all"),
    )
    kinds = [name for name, _ in KINDS] + [OTHER]
    for kind in kinds:
        figures = [
            services[service].get(kind, 0.0) * run["cpu_ms_per_move"][service]
            for service in services
        ]
        if any(figures):
            table.add_row(kind, *(_number(value, 3) for value in figures), _number(sum(figures), 3))
    transport = [
        sum(shares.get(kind, 0.0) for kind in TRANSPORT_KINDS) * run["cpu_ms_per_move"][service]
        for service, shares in services.items()
    ]
    table.add_row("transport: the first five kinds", *(_number(v, 3) for v in transport),
                  _number(sum(transport), 3))  # fmt: skip
    floor_run = _run_at(floor["runs"], None) if floor else None
    floor_cpu = floor_run["cpu_ms_per_move"] if floor_run is not None else {}
    if any(name.startswith("floor ") for name in floor_cpu):
        table.add_row(
            "the floor's process, whole (no code of ours)",
            *(_number(floor_cpu.get(f"floor {service}"), 3) for service in services),
            _number(sum(v for k, v in floor_cpu.items() if k.startswith("floor ") and v), 3),
        )
    return table
