"""The spend bench: its groups add up to the moves and the work it counted, a player without a
bank is at its allowance on every move, and the report is the same for a seed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cardtable_tools.bench import search_spend


def report_of(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict[str, Any]:
    assert search_spend.main([*arguments, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_groups_cover_every_move_and_all_the_work(capsys: pytest.CaptureFixture[str]) -> None:
    report = report_of(capsys, "--player", "hard:budget_ms=2", "--game", "hearts", "--moves", "30")
    (hearts,) = report["games"]
    groups = hearts["groups"]
    assert hearts["moves"] == 30 == sum(group["moves"] for group in groups)
    assert sum(group["work_share"] for group in groups) == pytest.approx(1.0, abs=0.01)
    # Hearts' pass comes first, with every card held, and lists no actions: a set of cards.
    assert (groups[0]["phase"], groups[0]["cards_held"], groups[0]["mean_choices"]) == (
        "pass",
        13,
        0,
    )
    held = [group["cards_held"] for group in groups if group["phase"] == "play"]
    assert held == sorted(held, reverse=True)
    again = search_spend.measure_spend("hearts", "hard:budget_ms=2", 30, seed=1)
    assert again == hearts  # work is counted, not timed


def test_a_search_without_a_bank_spends_its_allowance_on_every_move(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = report_of(capsys, "--player", "search:budget_ms=1", "--game", "whist", "--moves", "12")
    (whist,) = report["games"]
    assert whist["at_allowance"] == whist["moves"] == 12


def test_a_banking_player_leaves_its_allowance_on_clear_moves() -> None:
    noted = search_spend.play_and_note("hearts", "hard:budget_ms=2", 60, seed=1)
    # One card of each interchangeable group: a choice among touching cards costs one draw.
    assert any(not move.at_allowance for move in noted)
    assert any(move.at_allowance for move in noted)


def test_the_table_names_the_game_and_each_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert search_spend.main(["--player", "hard:budget_ms=2", "--game", "hearts",
                              "--moves", "10"]) == 0  # fmt: skip
    shown = capsys.readouterr().out
    assert "hearts: 10 moves" in shown
    assert "of the work on drawing worlds" in shown
    assert "a set" in shown  # the pass
    assert "of" in shown


def test_weighing_worlds_spends_a_larger_share_of_the_work_on_them() -> None:
    """Hard keeps one of four deals drawn and reads the others' plays on each; the plain
    search draws one, so drawing is a smaller part of its work."""
    weighing = search_spend.measure_spend("358", "hard:budget_ms=2", 40, seed=2)
    plain = search_spend.measure_spend("358", "search:budget_ms=2", 40, seed=2)
    assert 0 < plain["worlds_share"] < weighing["worlds_share"] < 1
    for group in weighing["groups"]:
        assert 0 < group["worlds_share"] <= 1


def test_a_player_that_does_not_search_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        search_spend.main(["--player", "rules", "--moves", "5"])
    assert refused.value.code == 2
    assert "does not search" in capsys.readouterr().err
