"""The decision-rollouts yardstick: where two players decide differently, which choice does
better when real players play the deal on."""

from __future__ import annotations

import json
import random

import pytest

from cardtable.engine.actions import parse_action
from cardtable.engine.registry import game_spec
from cardtable_tools.bench import decision_rollouts
from cardtable_tools.bench.decision_rollouts import Setup
from cardtable_tools.tournament import Board


def setup(judge: str, phase: str = "bid", player: str = "rules", game: str = "whist") -> Setup:
    return Setup(
        game=game,
        players=3 if game == "358" else 4,
        player=player,
        opponent="rules",
        judge=judge,
        phase=phase,
        min_cards=1,
        rollouts=2,
        seed=3,
    )


def test_a_judge_that_decides_as_the_player_finds_nothing_to_judge() -> None:
    assert decision_rollouts.judge_board(setup(judge="rules"), 0) == []


def test_only_the_phase_asked_is_judged() -> None:
    bids = decision_rollouts.judge_board(setup(judge="random"), 0)
    plays = decision_rollouts.judge_board(setup(judge="random", phase="play"), 0)
    assert bids and plays
    assert all(item.chosen.startswith("bid") and item.judge.startswith("bid") for item in bids)
    assert all(item.chosen.startswith("play") and item.judge.startswith("play") for item in plays)
    assert all(item.chosen != item.judge for item in bids + plays)


def test_sets_of_cards_are_judged_in_their_own_phase() -> None:
    """A 3-5-8 discard is a choice among sets of cards, which are not card plays: it is judged
    in the ``set`` phase and never as a contract choice."""
    discards = decision_rollouts.judge_board(setup("random", "set", game="358"), 0)
    contracts = decision_rollouts.judge_board(setup("random", "bid", game="358"), 0)
    assert discards and contracts
    assert all(item.chosen.startswith("discard") for item in discards)
    assert all(item.judge.startswith("discard") for item in discards)
    assert not any(item.chosen.startswith("discard") for item in contracts)


def test_a_difference_is_the_deal_played_on_from_each_choice() -> None:
    # Rule-based players play a deal on the same way whatever the rng: each rollout of a
    # choice is the same deal, so the difference is the two deals' advantages apart.
    spec = game_spec("whist")
    state = spec.new_game(4, None, 0)
    state.deal(Board(spec, 4, "7").deck_order(0))
    seat = state.to_act()[0]
    bids = [str(action) for action in state.legal_actions(seat)][:2]
    names = ["rules"] * 4
    held = len(state.observation(seat)["hand"])
    judged = decision_rollouts.valued(
        setup("random"), state, seat, held, (bids[0], bids[1]), names, "t"
    )
    after = []
    for bid in bids:
        played = state.clone()
        played.apply(seat, parse_action(bid))
        players = [decision_rollouts.make(name) for name in names]
        rng = random.Random(0)
        after.append(decision_rollouts.deal_value(played, seat, players, rng, deals=0))
    assert judged.cards == held
    assert judged.differences == (after[0] - after[1],) * 2
    same = decision_rollouts.valued(
        setup("random"), state, seat, held, (bids[0], bids[0]), names, "t"
    )
    assert same.differences == (0.0, 0.0)


def test_a_choice_that_ends_the_deal_is_valued_by_that_deal() -> None:
    """Belote's eighth pass throws the cards in: the pass is worth that deal (nothing to
    either side), not the next deal's play, and naming trump is played on as usual."""
    spec = game_spec("belote")
    state = spec.new_game(4, None, 0)
    state.deal(Board(spec, 4, "7").deck_order(0))
    for _ in range(7):
        state.apply(state.to_act()[0], parse_action("pass"))
    seat = state.to_act()[0]
    name = next(str(action) for action in state.legal_actions(seat) if str(action) != "pass")
    names = ["rules"] * 4
    judged = decision_rollouts.valued(setup("random"), state, seat, 5, ("pass", name), names, "t")
    named = state.clone()
    named.apply(seat, parse_action(name))
    players = [decision_rollouts.make(player) for player in names]
    value = decision_rollouts.deal_value(named, seat, players, random.Random(0), deals=0)
    assert judged.differences == (0.0 - value,) * 2
    assert value != 0


def test_the_command_prints_one_report(capsys: pytest.CaptureFixture[str]) -> None:
    players = ["--judge", "random", "--player", "rules", "--opponent", "rules"]
    size = ["--boards", "1", "--rollouts", "1", "--workers", "1", "--min-cards", "5"]
    decision_rollouts.main([*players, *size, "--decisions"])
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["decisions"] == len(report["decisions"]) > 0
    assert sum(group["decisions"] for group in report["by_cards"].values()) == len(
        report["decisions"]
    )
    assert all(int(cards) >= 5 for cards in report["by_cards"])
