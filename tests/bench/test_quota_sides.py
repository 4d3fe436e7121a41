"""``cardtable bench --quotas on,off``: each load on both sides, their CPU per move compared.

The end-to-end test keeps the load tiny (the table path, two tables for two seconds): both
sides are measured and reported, the "on" side's table service made every kind of quota
check and refused no one, and the "off" side's made none. The figures themselves are the
benchmark's business; the rest checks the comparison and its rendering on made-up runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cardtable.cli.main import main
from cardtable_tools.bench import quota_sides
from cardtable_tools.bench.quota_sides import compare_load, parse_sides, side_order
from cardtable_tools.bench.render import render_system_report


@pytest.mark.services
def test_the_bench_measures_each_load_with_quotas_on_and_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "bench",
            "--table-path",
            "--tables", "2",
            "--seconds", "2",
            "--raw-seconds", "0.3",
            "--no-paced",
            "--no-floor",
            "--clients", "turns",
            "--quotas", "on,off",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    quotas = report["quotas"]
    assert quotas["sides"] == ["on", "off"]
    assert quotas["settings"]["off"] == {"QUOTAS_ENABLED": "false"}
    (load,) = quotas["loads"]
    assert load["tables"] == 2 and load["order"] == ["on", "off"]
    on, off = load["on"], load["off"]
    for side in (on, off):
        assert side["moves"] > 10 and side["errors"] == 0
        assert side["cpu_ms_per_move"] > 0 and side["table_cpu_ms_per_move"] > 0
        assert side["quota_refusals"] == 0
    assert load["cpu_ratio_on_to_off"] == pytest.approx(
        on["cpu_ms_per_move"] / off["cpu_ms_per_move"], abs=0.001
    )
    # With quotas on every check ran (turns clients open watch streams); off, none did.
    assert all(count > 0 for count in on["quota_checks"].values()), on["quota_checks"]
    assert set(off["quota_checks"].values()) == {0}
    assert load["checks_ran"] is True
    # The report's runs are the first side's.
    (run,) = report["runs"]
    assert run["quotas"] == "on" and run["quota_checks"] == on["quota_checks"]
    shown = capsys.readouterr().err
    assert "CPU ms per move with quotas on and off" in shown
    assert "quotas on ÷ off at 2 tables" in shown


def test_sides_parse_and_alternate() -> None:
    assert parse_sides("on,off") == ("on", "off")
    assert parse_sides(" off ") == ("off",)
    for wrong in ("", "on,on", "maybe", "on,off,on"):
        with pytest.raises(ValueError):
            parse_sides(wrong)
    assert side_order(("on", "off"), 0) == ["on", "off"]
    assert side_order(("on", "off"), 1) == ["off", "on"]


async def test_loads_go_to_each_sides_stack_in_turn() -> None:
    stacks: dict[str, Any] = {"on": object(), "off": object()}  # what the loads are given
    measured: list[str] = []
    costs = iter([1.02, 1.0, 1.0, 1.08])  # CPU ms per move of the table service, in turn

    async def load(stack: Any) -> dict[str, Any]:
        side = next(side for side, its in stacks.items() if its is stack)
        measured.append(side)
        return _run({"table": next(costs)}, ON_CHECKS if side == "on" else OFF_CHECKS)

    sides = quota_sides.SideBySide(stacks, lambda _: None)
    first = await sides.measure(load, "load")
    second = await sides.measure(load, "load")

    assert measured == ["on", "off", "off", "on"]
    assert first["quotas"] == second["quotas"] == "on"
    report = sides.report()
    assert [load["order"] for load in report["loads"]] == [["on", "off"], ["off", "on"]]
    assert [load["cpu_ratio_on_to_off"] for load in report["loads"]] == [1.02, 1.08]
    assert report["cpu_ratio_on_to_off_geometric_mean"] == pytest.approx(
        (1.02 * 1.08) ** 0.5, abs=0.001
    )


def _run(cpu: dict[str, float], checks: dict[str, int], refusals: int = 0) -> dict[str, Any]:
    """A load of 20,000 moves that cost ``cpu`` ms each, by process."""
    return {
        "tables": 160,
        "moves": 20_000,
        "moves_per_s": 1_100.0,
        "errors": 0,
        "cpu_seconds": {name: ms * 20 for name, ms in cpu.items()},
        "cpu_ms_per_move": cpu,
        "quota_checks": checks,
        "quota_refusals": refusals,
    }


ON_CHECKS = {"mutation_rate": 25_000, "open_tables_per_player": 400, "watch_streams": 0}
OFF_CHECKS = dict.fromkeys(ON_CHECKS, 0)


def test_the_comparison_judges_the_ratio_and_whether_the_checks_ran() -> None:
    on = _run({"table": 0.84, "rules": 0.5, "clients": 0.7}, ON_CHECKS)
    off = _run({"table": 0.80, "rules": 0.5, "clients": 0.7}, OFF_CHECKS)
    load = compare_load({"on": on, "off": off}, ["on", "off"])
    assert load["on"]["cpu_ms_per_move"] == pytest.approx(2.04)
    assert load["cpu_ratio_on_to_off"] == pytest.approx(1.02)
    assert load["table_cpu_ratio_on_to_off"] == pytest.approx(1.05)
    assert load["within_bound"] and load["checks_ran"]

    costly = _run({"table": 1.0, "rules": 0.5, "clients": 0.7}, ON_CHECKS)
    assert not compare_load({"on": costly, "off": off}, ["off", "on"])["within_bound"]
    refused = _run({"table": 0.84, "rules": 0.5, "clients": 0.7}, ON_CHECKS, refusals=3)
    assert not compare_load({"on": refused, "off": off}, ["on", "off"])["checks_ran"]
    unchecked = _run({"table": 0.84, "rules": 0.5, "clients": 0.7}, OFF_CHECKS)
    assert not compare_load({"on": unchecked, "off": off}, ["on", "off"])["checks_ran"]


def test_the_report_shows_both_sides_and_the_ratio() -> None:
    on = _run({"table": 0.84, "clients": 0.7}, ON_CHECKS)
    off = _run({"table": 0.80, "clients": 0.7}, OFF_CHECKS)
    run = {
        **on,
        "games": 300,
        "move_latency_p50_ms": 50.0,
        "move_latency_p95_ms": 90.0,
        "move_latency_p99_ms": 120.0,
        "projection_lag_p50_ms": None,
        "projection_lag_p99_ms": None,
        "ratios": dict.fromkeys(
            (
                "vs_jetstream_sequential_appends",
                "vs_jetstream_64_in_flight_appends",
                "vs_postgres_batched_insert_rows",
                "vs_grpc_unary_sequential",
                "vs_grpc_unary_64_in_flight",
            ),
            0.1,
        ),
        "quotas": "on",
    }
    report = {
        "game": "hearts",
        "clients": "pipeline",
        "runs": [run],
        "raw_limits": {
            "jetstream_appends_per_s": {"sequential": 9000.0, "64_in_flight": 18000.0},
            "postgres_batched_inserts_rows_per_s": None,
            "grpc_unary_calls_per_s": {"sequential": 2000.0, "64_in_flight": 4000.0},
        },
        "targets": {},
        "targets_met": {},
        "quotas": {
            "sides": ["on", "off"],
            "max_apart": 0.05,
            "loads": [compare_load({"on": on, "off": off}, ["on", "off"])],
        },
    }
    console = Console(width=200, record=True)
    console.print(render_system_report(report))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "1.540" in line)
    assert "1.500" in row and "1.027" in row and "0.840" in row and "1.050" in row
    assert (
        "within  quotas on ÷ off at 160 tables: CPU per move 1.027 (bound 1.05); with quotas "
        "on the checks ran: 25,000 mutating calls, 400 new tables, 0 watch streams, 0 refused"
        in text
    )
