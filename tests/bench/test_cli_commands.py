"""The proof commands as a person runs them: ``cardtable bench-scoring`` and ``cardtable fuzz``.

Tiny runs against the test servers; what they measure is tested with their modules, here the
command line: exit codes, the JSON written and printed, the figures present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.cli.main import main

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
    assert "projection lag at 100 messages/s: p50" in printed.err


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
    assert _printed(capsys) == report
    assert report["ok"] is True and report["requests"] == 80
    assert report["unexpected"] == 0 and report["events_appended_by_hostile"] == 0
