"""``cardtable tournament-pool``: runs of one match-up with different seeds read as one."""

from __future__ import annotations

import doctest
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from cardtable.bots.levels import WORLD_CANDIDATES_IN
from cardtable.cli.main import main
from cardtable_tools import tournament_pool
from cardtable_tools.anytime import anytime_interval
from cardtable_tools.tournament import confidence_interval, run_tournament
from cardtable_tools.tournament_pool import PoolError, pool_reports

SEATS = ["rules", "random", "rules", "random"]


def whist_run(seed: int, **options: Any) -> dict[str, Any]:
    """A short Whist run as ``tournament --json`` writes it (through JSON, as a file holds it)."""
    report = run_tournament("whist", SEATS, 4, seed, by_deal=True, **options)
    loaded: dict[str, Any] = json.loads(json.dumps(report))
    return loaded


def test_a_report_says_what_was_played() -> None:
    report = run_tournament(
        "hearts",
        ["hard", "search", "hard", "search"],
        4,
        seed=7,
        options={"quick": "true"},
        strategy_options={"hard": {"budget_ms": 2.0}, "search": {"budget_ms": 3.0}},
    )
    assert report["seed"] == 7 and report["every_rotation"] is False
    assert report["options"] == {"quick": "true"}
    hard = report["settings"]["hard"]
    # the level's own options are recorded with the budget it was given on top
    assert hard["strategy"] == "search" and hard["options"]["budget_ms"] == 2.0
    assert hard["options"]["world_candidates"] == dict(WORLD_CANDIDATES_IN)
    assert report["settings"]["search"] == {"strategy": "search", "options": {"budget_ms": 3.0}}
    assert json.loads(json.dumps(report))["settings"] == report["settings"]


def test_runs_of_different_seeds_pool_into_one_sample_of_their_boards() -> None:
    runs = [whist_run(seed) for seed in (1, 2, 3)]
    pooled = pool_reports(runs)
    assert pooled["seeds"] == [1, 2, 3] and pooled["runs"] == 3
    assert pooled["games"] == 12 and pooled["boards"] == 6
    for name in ("rules", "random"):
        boards = [value for run in runs for value in run[name]["board_advantages"]]
        entry = pooled[name]
        assert entry["board_advantages"] == boards
        assert entry["advantage"] == round(statistics.fmean(boards), 3)
        assert entry["ci95"] == [round(bound, 3) for bound in confidence_interval(boards)]
        # the interval that allows for a look after every run is the wider one
        assert entry["ci95_anytime"] == [round(bound, 3) for bound in anytime_interval(boards)]
        assert entry["ci95_anytime"][0] < entry["ci95"][0] < entry["ci95"][1]
        assert entry["ci95"][1] < entry["ci95_anytime"][1]
        wins = statistics.fmean(run[name]["win_rate"] for run in runs)
        assert entry["win_rate"] == round(wins, 4)
    assert pooled["ladder"] == ["rules", "random"]
    # a pooled run is narrower than any of its runs
    width = pooled["rules"]["ci95"][1] - pooled["rules"]["ci95"][0]
    assert all(width < run["rules"]["ci95"][1] - run["rules"]["ci95"][0] for run in runs)


def test_the_deals_pool_by_size_weighed_by_their_number() -> None:
    runs = [whist_run(seed) for seed in (4, 5)]
    pooled = pool_reports(runs)["by_deal"]["rules"]
    for row in pooled:
        size = row["cards_each"]
        rows = [next(r for r in run["by_deal"]["rules"] if r["cards_each"] == size) for run in runs]
        assert row["deals"] == sum(r["deals"] for r in rows)
        total = sum(r["advantage"] * r["deals"] for r in rows)
        assert row["advantage"] == pytest.approx(total / row["deals"], abs=1e-3)
        assert set(row) == set(rows[0])


def test_runs_that_played_other_things_or_the_same_boards_are_refused() -> None:
    one, two = whist_run(1), whist_run(2)
    with pytest.raises(PoolError, match="seed 1's boards 0-1 are given more than once"):
        pool_reports([one, whist_run(1)])
    hearts = json.loads(
        json.dumps(run_tournament("hearts", SEATS, 4, 2, options={"quick": "true"}))
    )
    with pytest.raises(PoolError, match="game, options differ"):
        pool_reports([one, hearts], ["a.json", "b.json"])
    faster = json.loads(
        json.dumps(run_tournament("whist", ["search", "rules", "search", "rules"], 4, 3,
                                  strategy_options={"search": {"budget_ms": 1.0}}))
    )  # fmt: skip
    slower = json.loads(
        json.dumps(run_tournament("whist", ["search", "rules", "search", "rules"], 4, 4,
                                  strategy_options={"search": {"budget_ms": 2.0}}))
    )  # fmt: skip
    with pytest.raises(PoolError, match="its settings differ"):
        pool_reports([faster, slower])
    old = {key: value for key, value in two.items() if key not in ("seed", "settings")}
    with pytest.raises(PoolError, match="does not say its settings, seed"):
        pool_reports([one, old], ["new.json", "old.json"])
    with pytest.raises(PoolError, match="no reports"):
        pool_reports([])


def test_pieces_of_one_seed_pool_into_the_run_of_all_their_boards() -> None:
    """A run stopped early and the one that played on from its next board (``--first-board``)
    are one run of the seed; a piece that repeats a board is refused."""
    whole = json.loads(json.dumps(run_tournament("whist", SEATS, 8, 6, by_deal=True)))
    first = whist_run(6)
    rest = whist_run(6, first_board=2)
    pooled = pool_reports([first, rest])
    assert pooled["seeds"] == [6, 6] and pooled["first_boards"] == [0, 2]
    for name in ("rules", "random"):
        for key in ("advantage", "ci95", "board_advantages", "games_to_clear"):
            assert pooled[name][key] == whole[name][key]
    for row, one_run in zip(pooled["by_deal"]["rules"], whole["by_deal"]["rules"], strict=True):
        assert row == pytest.approx(one_run, abs=2e-3)  # means of rounded means
    overlapping = whist_run(6, first_board=1)
    with pytest.raises(PoolError, match="seed 6's boards 1-2 are given more than once"):
        pool_reports([first, rest, overlapping])
    old = {key: value for key, value in first.items() if key != "first_board"}
    with pytest.raises(PoolError, match="seed 6's boards 0-1"):
        pool_reports([old, first])


def test_the_command_pools_files_and_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # wide enough that no heading wraps
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"whist-{seed}.json"
        path.write_text(json.dumps(whist_run(seed)))
        paths.append(str(path))
    assert main(["tournament-pool", *paths, "--json"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    runs = [json.loads(Path(path).read_text()) for path in paths]
    assert pooled == json.loads(json.dumps(pool_reports(runs, paths)))
    assert main(["tournament-pool", *paths]) == 0
    shown = capsys.readouterr().out
    assert "8 games, 4 boards" in shown and "2 runs pooled (seeds 1, 2)" in shown
    assert "any looks" in shown
    assert "by deal size" in shown
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    for refused, reason in (
        ([paths[0], paths[0]], "more than once"),
        ([paths[0], str(broken)], "cannot read a report"),
        ([paths[0], str(listed)], "not a `tournament --json` report"),
        ([paths[0], str(tmp_path / "missing.json")], "cannot read a report"),
    ):
        assert main(["tournament-pool", *refused]) == 2
        assert reason in " ".join(capsys.readouterr().err.split())


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(tournament_pool)
    assert results.attempted > 0 and results.failed == 0
