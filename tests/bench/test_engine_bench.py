"""``cardtable bench-engine`` against the Hearts yardstick that ships with the repository.

Tiny runs: the figures themselves are the benchmark's business; here, that the yardstick is in
the package, that the command finds it from anywhere, and that the report compares with it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cardtable.cli.main import main
from cardtable_tools.simulation.bench import YARDSTICK, engine_bench, run_yardstick

PACKAGE = Path(__file__).resolve().parents[2] / "tools" / "cardtable_tools"


def test_the_yardstick_ships_inside_the_tools_package() -> None:
    assert YARDSTICK.is_file()
    assert YARDSTICK.is_relative_to(PACKAGE)
    assert YARDSTICK.read_text().startswith('"""Yardstick: the cheapest honest Hearts deal')


def test_the_yardstick_runs_as_a_standalone_script() -> None:
    result = run_yardstick(YARDSTICK, 0.2)
    assert result["deals_per_s"] > 0 and result["plays_per_s"] > result["deals_per_s"]


def test_engine_bench_reports_the_ratio_to_the_yardstick() -> None:
    report = engine_bench(0.4, YARDSTICK, rounds=1)
    assert [game["game"] for game in report["games"]] == ["hearts", "whist", "358", "belote"]
    assert report["yardstick"]["deals_per_s"] > 0
    hearts = report["games"][0]["deals_per_s"]
    assert report["hearts_deals_vs_yardstick"] == pytest.approx(
        hearts / report["yardstick"]["deals_per_s"], rel=0.01
    )


def test_bench_engine_uses_the_packaged_yardstick_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing beside the working folder to find
    assert main(["bench-engine", "--seconds", "0.5"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["yardstick"]["deals_per_s"] > 0
    assert report["hearts_deals_vs_yardstick"] > 0


def test_bench_engine_refuses_a_missing_yardstick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench-engine", "--seconds", "0.1", "--yardstick", str(tmp_path / "no.py")]) == 2
    assert "no yardstick at" in capsys.readouterr().err


def test_seconds_is_the_whole_run_not_each_game(capsys: pytest.CaptureFixture[str]) -> None:
    """``--seconds 2`` used to measure each of the four games and the yardstick for 2 s: 10 s."""
    started = time.monotonic()
    assert main(["bench-engine", "--seconds", "2"]) == 0
    took = time.monotonic() - started
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["seconds"] == 2 and report["seconds_per_measurement"] == pytest.approx(0.08)
    # Measuring each game for 2 s took 10 s at the least; starting the yardstick's five
    # processes adds seconds on a busy machine, which must not fail the test.
    assert took < 2 * 5
