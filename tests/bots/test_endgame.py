from __future__ import annotations

import doctest
import random
from types import ModuleType

import pytest

from cardtable.bots import card_plays, outlook, search
from cardtable.bots.endgame import (
    EndgameSolver,
    SolvedLine,
    distinct_plays,
    most_cards_held,
    oriented_scores,
)
from cardtable.bots.outlook import advantage_over_others
from cardtable.bots.search import SearchStrategy, evaluate, keen_policy
from cardtable.engine.actions import PLAY_CARD, parse_action
from cardtable.engine.game import GameState
from cardtable.engine.games.whist.rules import WhistState
from tests.bots.positions import random_positions
from tests.bots.test_rules import whist_trick_one


def endings(game: str, players: int, most_cards: int, count: int) -> list[GameState]:
    """Random positions of ``game`` where every seat holds ``most_cards`` or fewer and the
    seat to act plays a card."""
    found = []
    for state in random_positions(game, players, {}, seed=11, count=4000, chance=0.5):
        held = most_cards_held(state)
        seat = state.to_act()[0]
        plays = state.legal_actions(seat)
        if held is not None and held <= most_cards and plays and plays[0].kind == PLAY_CARD:
            found.append(state)
            if len(found) == count:
                break
    assert len(found) == count
    return found


def solved(state: GameState) -> SolvedLine:
    line = EndgameSolver().solve(state)
    assert line is not None
    return line


@pytest.mark.parametrize(
    ("game", "players"), [("whist", 4), ("whist", 3), ("358", 3), ("hearts", 4)]
)
def test_the_seat_to_act_gets_the_best_of_every_card_it_may_play(game: str, players: int) -> None:
    # max^n one step at a time: the line's value for the seat to act is the best over all its
    # legal cards (each followed by the others' best), interchangeable ones included.
    for state in endings(game, players, most_cards=3, count=12):
        seat = state.to_act()[0]
        line = solved(state)
        best = float("-inf")
        for action in state.legal_actions(seat):
            child = state.clone()
            child.apply(seat, action)
            ended = len(child.deal_scores) > len(state.deal_scores)
            values = oriented_scores(child) if ended else solved(child).values
            best = max(best, advantage_over_others(values, seat))
        assert advantage_over_others(line.values, seat) == pytest.approx(best)
        # The line ends the deal, and its values are that deal's scores.
        assert len(line.end.deal_scores) == len(state.deal_scores) + 1
        assert line.values == oriented_scores(line.end)


def test_the_solver_leaves_its_state_alone_and_counts_the_cards_it_applies() -> None:
    state = next(
        state
        for state in endings("whist", 4, most_cards=2, count=20)
        if isinstance(state, WhistState) and not state.trick
    )
    before = state.to_snapshot()
    solver = EndgameSolver()
    solver.solve(state)
    assert state.to_snapshot() == before
    # At least the cards left in the hands, one line's worth; a second solve adds as much.
    cards_left = sum(len(hand) for hand in state.hands)
    once = solver.applied
    assert once >= cards_left
    solver.solve(state)
    assert solver.applied == 2 * once


def test_a_seat_that_wants_no_trick_ducks_and_keeps_its_ace_for_a_suit_it_can_shed() -> None:
    # Seat 2 bid nothing and holds AH 8H; seat 1 leads KH. Ducking with 8H, seat 2 can throw
    # its ace on the diamond seat 1 leads next, and takes no trick.
    hands = ["QD 7C", "KH 9D", "AH 8H", "10D JD"]
    state = whist_trick_one(hands, turned="7S", bids={2: 0})
    state.apply(1, parse_action("play KH"))
    line = solved(state)
    assert line.end.deal_scores[-1][2] == 5  # exact on a bid of nothing
    plays = distinct_plays(state, 2)
    assert plays is not None and len(plays) == 2
    taking = state.clone()
    taking.apply(2, parse_action("play AH"))
    assert advantage_over_others(solved(taking).values, 2) < advantage_over_others(line.values, 2)


def test_a_decision_that_is_not_a_card_is_left_to_the_playout() -> None:
    bidding = [
        state
        for state in random_positions("whist", 4, {}, seed=5, count=400, chance=0.5)
        if state.phase == "bid" and most_cards_held(state) == 2
    ]
    assert bidding
    for state in bidding:
        assert EndgameSolver().solve(state) is None


def test_the_search_plays_a_playouts_ending_exactly_and_pays_for_every_card_tried() -> None:
    hands = ["QD 7C", "KH 9D", "AH 8H", "10D JD"]
    state = whist_trick_one(hands, turned="7S", bids={2: 0})
    state.apply(1, parse_action("play KH"))
    duck = parse_action("play 8H")
    value, work = evaluate(state, 2, duck, keen_policy, random.Random(1), endgame_cards=2)
    after = state.clone()
    after.apply(2, duck)
    solver = EndgameSolver()
    line = solver.solve(after)
    assert line is not None
    assert value == advantage_over_others(line.values, 2)
    assert work == 1 + solver.applied


def test_exact_endings_change_what_some_playouts_foresee() -> None:
    differ = 0
    for state in endings("whist", 4, most_cards=3, count=40):
        seat = state.to_act()[0]
        for action in state.legal_actions(seat):
            played = evaluate(state, seat, action, keen_policy, random.Random(1))[0]
            exact = evaluate(state, seat, action, keen_policy, random.Random(1), endgame_cards=3)
            differ += played != exact[0]
    assert differ > 0


def test_the_exact_ending_is_a_whole_number_of_cards() -> None:
    with pytest.raises(ValueError, match="whole number"):
        SearchStrategy(endgame_cards=-1)


@pytest.mark.parametrize("module", [card_plays, outlook, search], ids=lambda m: m.__name__)
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0
