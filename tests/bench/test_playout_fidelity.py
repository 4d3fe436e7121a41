"""The playout-fidelity yardstick: a deal played on from a bid by the playout policy, against by
the real players."""

from __future__ import annotations

import json

import pytest

from cardtable_tools.bench import playout_fidelity


def test_players_that_play_as_the_policy_are_foreseen_exactly() -> None:
    # The rule-based strategy is the rules playout policy reading an observation: every way of
    # playing the deal on is then the same deal, trick for trick.
    make = playout_fidelity.maker("rules", "rules")
    positions = playout_fidelity.collect_bids(make, games=2, seed=4, sizes=frozenset({6, 7, 8}))
    assert positions
    outcomes = playout_fidelity.measure(positions, make, "rules", seed=4)
    assert outcomes["bidder_real"] == outcomes["policy"]
    assert outcomes["others_real"] == outcomes["policy"]
    assert outcomes["real"] == outcomes["policy"]


def test_only_the_players_bids_in_deals_of_the_sizes_asked_count() -> None:
    make = playout_fidelity.maker("rules", "random")
    positions = playout_fidelity.collect_bids(make, games=2, seed=4, sizes=frozenset({8}))
    assert positions
    for position in positions:
        assert position.state.cards_each == 8
        assert position.sides[position.seat] == "player"
        assert len(position.state.legal_actions(position.seat)) > 1


def test_a_player_unlike_the_policy_is_not_foreseen() -> None:
    # Random opponents play nothing like the rule-based policy: some deal must part.
    make = playout_fidelity.maker("rules", "random")
    positions = playout_fidelity.collect_bids(make, games=2, seed=4, sizes=frozenset({7, 8}))
    outcomes = playout_fidelity.measure(positions, make, "rules", seed=4)
    assert outcomes["bidder_real"] == outcomes["policy"]
    assert outcomes["others_real"] != outcomes["policy"]


def test_the_command_prints_one_report(capsys: pytest.CaptureFixture[str]) -> None:
    playout_fidelity.main(
        ["--player", "rules", "--opponent", "search:worlds=2", "--games", "1", "--sizes", "7,8"]
    )
    report = json.loads(capsys.readouterr().out)
    assert report["sizes"] == [7, 8] and report["bids"] > 0
    assert set(report["ways"]) == {"policy", "bidder_real", "others_real", "real"}
    for way in report["ways"].values():
        assert 0 <= way["exact"] + way["over"] <= 1
