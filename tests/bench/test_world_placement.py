"""The measurement behind hard's ways of weighing worlds: how close each comes to the real deal,
and what its weights leave of the worlds drawn."""

from __future__ import annotations

import json

import pytest

from cardtable_tools.bench import world_placement


def test_the_stronger_the_weights_the_closer_the_worlds_and_the_fewer_that_count() -> None:
    result = world_placement.run("whist", 4, budget_ms=1, positions=12, draws=80, seed=3)
    placed = [result[key] for key in ("uniform", "kept_of_2", "power_1")]
    effective = [result[f"effective_{power:g}"] for power in (0.25, 0.5, 1.0)]
    assert all(0 < share < 1 for share in placed)  # type: ignore[operator]
    # the likelihood points at the real deal, and the whole of it further than a world kept
    # of two drawn
    assert placed == sorted(placed), placed
    assert result["power_0.5"] > result["uniform"]  # type: ignore[operator]
    assert effective == sorted(effective, reverse=True) and effective[0] <= 1, effective


def test_the_command_prints_a_table_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["--game", "hearts", "--budget-ms", "1", "--positions", "2", "--draws", "20"]
    world_placement.main(arguments)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "hearts: 2 positions, 20 worlds drawn each"
    assert [line.split()[0] for line in lines[2:]] == ["uniform", "one", "one", *["every"] * 3]
    world_placement.main([*arguments, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == "hearts" and report["positions"] == 2
    assert 0 < report["effective_1"] <= report["effective_0.25"] <= 1
