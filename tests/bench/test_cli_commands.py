"""The proof commands as a person runs them: ``cardtable bench-scoring`` and ``cardtable fuzz``.

Tiny runs against the test servers; what they measure is tested with their modules, here the
command line: exit codes, the JSON written and printed, the figures present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.cli.main import main
from cardtable_tools.bench.scoring_lag import projection_lag_at_rate

pytestmark = pytest.mark.services


def _printed(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    document = json.loads(last_line)
    assert isinstance(document, dict)
    return document


def test_bench_scoring_writes_and_prints_its_figures(
    nats_url: str,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", database_url)
    # The lag is measured after 2,000 unmeasured messages, as in test_scoring_lag.py, not the
    # command's 12,000 (20 to 40 s of this test): the command line is what is tested here.
    monkeypatch.setitem(projection_lag_at_rate.__kwdefaults__, "warm_up", 2000)
    out = tmp_path / "results" / "scoring.json"

    command = ["bench-scoring", "--games", "12", "--lag-rate", "100", "--lag-seconds", "1"]
    assert main([*command, "--json-out", str(out)]) == 0

    figures = json.loads(out.read_text())
    printed = capsys.readouterr()
    assert json.loads(printed.out.strip().splitlines()[-1]) == figures
    assert figures["games"] == 12 and figures["rebuild_equals_live"] is True
    assert figures["rebuild_events_per_s"] > 0 and figures["live_events_per_s"] > 0
    lag = figures["lag_at_target_load"]
    assert lag["messages"] == lag["projected_messages"] == 100
    assert lag["warm_up_messages"] == 2000
    assert "projection lag at 100 messages/s: p50" in printed.err
    assert "bench-scoring: done in" in printed.err  # no terminal: lines, not a bar


def test_fuzz_answers_every_hostile_request_and_exits_zero(
    nats_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    out = tmp_path / "fuzz.json"

    assert main(["fuzz", "--requests", "80", "--seed", "5", "--json-out", str(out)]) == 0

    report = json.loads(out.read_text())
    printed = capsys.readouterr()
    assert json.loads(printed.out.strip().splitlines()[-1]) == report
    assert "fuzz: 80/80 requests in" in printed.err
    assert report["ok"] is True and report["requests"] == 80
    assert report["unexpected"] == 0 and report["events_appended_by_hostile"] == 0


def test_bench_floor_adds_the_work_it_is_asked_for_to_each_move(
    nats_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    command = ["bench-floor", "--tables", "2", "--seconds", "2", "--rates", "10"]
    assert main([*command, "--work-us", "0,20000"]) == 0

    report = _printed(capsys)
    bare, worked = report["steps"]  # type: ignore[misc]
    assert (bare["work_us_per_move"], worked["work_us_per_move"]) == (0, 20000)

    def servers_cpu(step: dict[str, object]) -> float:
        (run,) = step["runs"]  # type: ignore[misc]
        assert run["moves"] > 0 and run["errors"] == 0
        assert run["within_target"] is None  # no target is set at 10 moves/s
        return float(run["cpu_ms_per_move"]["floor rules"] + run["cpu_ms_per_move"]["floor table"])

    # Three calls of a third each: the servers spend 20 ms more CPU on each move. At so few
    # moves a second the idle servers' own CPU per move varies by a few ms from run to run.
    assert servers_cpu(worked) >= servers_cpu(bare) + 15
