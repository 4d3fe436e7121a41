"""``cardtable tournament-pair``: a changed player against the first on the same boards."""

from __future__ import annotations

import doctest
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from cardtable.cli.main import main
from cardtable_tools.commands import tournament_pair as pair_command
from cardtable_tools.tournament import confidence_interval, run_tournament
from cardtable_tools.tournament_pair import PairError, pair_reports


def whist_run(
    seats: list[str], seed: int, games: int = 4, first_board: int = 0, **variants: str
) -> dict[str, Any]:
    """A short Whist run as ``tournament --json`` writes it; ``variants`` seat a name playing
    another strategy (``x="random"``)."""
    options = {name: {"variant_of": base} for name, base in variants.items()}
    report = run_tournament(
        "whist", seats, games, seed, strategy_options=options, first_board=first_board
    )
    loaded: dict[str, Any] = json.loads(json.dumps(report))
    return loaded


def test_the_same_player_under_another_name_plays_the_same_boards_to_no_difference() -> None:
    base = whist_run(["rules", "random", "rules", "random"], seed=3)
    trial = whist_run(["x", "random", "x", "random"], seed=3, x="rules")
    paired = pair_reports([base], "rules", [trial], "x")
    assert paired["boards"] == 2 and paired["unpaired"] == 0 and paired["seeds"] == [3]
    assert paired["differences"] == [0.0, 0.0] and paired["difference"] == 0.0
    assert paired["base"] == paired["trial"] == round(base["rules"]["advantage"], 3)


def test_a_changed_player_is_compared_board_by_board() -> None:
    base = whist_run(["rules", "random", "rules", "random"], seed=4)
    trial = whist_run(["x", "random", "x", "random"], seed=4, x="random")
    paired = pair_reports([base], "rules", [trial], "x")
    differences = [
        after - before
        for before, after in zip(
            base["rules"]["board_advantages"], trial["x"]["board_advantages"], strict=True
        )
    ]
    assert paired["differences"] == [round(value, 3) for value in differences]
    assert paired["difference"] == round(statistics.fmean(differences), 3)
    assert paired["ci95"] == [round(bound, 3) for bound in confidence_interval(differences)]
    # random in place of rules loses its advantage over the random opponents
    assert paired["trial"] < paired["base"]


def test_runs_of_a_seed_split_at_a_board_pair_with_one_whole_run() -> None:
    seats = ["rules", "random", "rules", "random"]
    whole = whist_run(seats, seed=5, games=8)
    trial_seats = ["x", "random", "x", "random"]
    first = whist_run(trial_seats, seed=5, games=2, x="rules")
    rest = whist_run(trial_seats, seed=5, games=6, first_board=1, x="rules")
    paired = pair_reports([whole], "rules", [rest, first], "x")
    assert paired["boards"] == 4 and paired["differences"] == [0.0] * 4
    # a side that played boards the other did not: those are left out and counted
    paired = pair_reports([whole], "rules", [rest], "x")
    assert paired["boards"] == 3 and paired["unpaired"] == 1


def test_boards_not_played_alike_are_refused() -> None:
    base = whist_run(["rules", "random", "rules", "random"], seed=6)
    moved = whist_run(["x", "x", "random", "random"], seed=6, x="rules")
    with pytest.raises(PairError, match="must sit where the other did"):
        pair_reports([base], "rules", [moved], "x")
    other_seed = whist_run(["x", "random", "x", "random"], seed=7, x="rules")
    with pytest.raises(PairError, match="no board in common"):
        pair_reports([base], "rules", [other_seed], "x")
    trial = whist_run(["x", "random", "x", "random"], seed=6, x="rules")
    with pytest.raises(PairError, match="given twice on one side"):
        pair_reports([base], "rules", [trial, trial], "x")
    with pytest.raises(PairError, match="no player named hard"):
        pair_reports([base], "hard", [trial], "x")
    other_game = {**trial, "options": {"quick": "true"}}
    with pytest.raises(PairError, match="differ in their options"):
        pair_reports([base], "rules", [other_game], "x")
    other_opponent = {**trial, "settings": {**trial["settings"], "random": {"strategy": "rules"}}}
    with pytest.raises(PairError, match="random played with different settings"):
        pair_reports([base], "rules", [other_opponent], "x")


def test_the_command_compares_files_and_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # wide enough that no line wraps
    base_path = tmp_path / "base.json"
    base_path.write_text(json.dumps(whist_run(["rules", "random", "rules", "random"], seed=8)))
    trial_path = tmp_path / "trial.json"
    trial_path.write_text(json.dumps(whist_run(["x", "random", "x", "random"], seed=8, x="random")))
    sides = ["--base", "rules", str(base_path), "--trial", "x", str(trial_path)]
    assert main(["tournament-pair", *sides, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    reports = [json.loads(path.read_text()) for path in (base_path, trial_path)]
    assert shown == pair_reports(reports[:1], "rules", reports[1:], "x")
    assert main(["tournament-pair", *sides]) == 0
    table = capsys.readouterr().out
    assert "2 boards played by both" in table and "difference" in table
    assert "x's advantage less rules's on each board" in " ".join(table.split())
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for refused, reason in (
        (["--base", "rules", str(base_path), "--trial", "x", str(broken)], "cannot read"),
        (["--base", str(base_path), "--trial", "x", str(trial_path)], "give a side as NAME"),
        (["--base", "hard", str(base_path), "--trial", "x", str(trial_path)], "player hard"),
        (["--base", "rules", str(base_path), "--trial", "x", str(base_path)], "player x"),
    ):
        assert main(["tournament-pair", *refused]) == 2
        assert reason in " ".join(capsys.readouterr().err.split())


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(pair_command)
    assert results.attempted > 0 and results.failed == 0
