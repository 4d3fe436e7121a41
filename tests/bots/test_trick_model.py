from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from cardtable.bots.outlook import outlook
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.rules import rules_action
from cardtable.bots.search import (
    SearchStrategy,
    deal_advantage,
    evaluate,
    keen_policy,
    rules_policy,
)
from cardtable.bots.trick_model import (
    ESTIMATE_UNITS,
    FEATURES,
    can_estimate,
    coefficients,
    cut_after,
    estimated_deal_scores,
    estimated_tricks,
    hand_features,
    model_key,
)
from cardtable.engine.game import GameState
from cardtable.engine.games.three_five_eight.rules import (
    DEALS,
    HAND_SIZE,
    PLAY_PHASE,
    ThreeFiveEightState,
)
from tests.bots.positions import rules_positions


def trick_start(state: GameState) -> bool:
    return (
        isinstance(state, ThreeFiveEightState)
        and state.phase == PLAY_PHASE
        and not state.trick
        and len(state.tricks) in (0, 3, 7)
    )


def positions(count: int, wanted: Callable[[GameState], bool] = trick_start) -> list[Any]:
    return list(rules_positions("358", 3, seed=5, count=count, wanted=wanted))


def test_every_kind_of_contract_and_number_of_tricks_left_has_a_fit() -> None:
    fits = coefficients()
    for kind in ("trump", "NT", "MT"):
        for left in range(1, HAND_SIZE + 1):
            assert len(fits[model_key(kind, left)]) == FEATURES


def test_the_estimate_shares_out_exactly_the_tricks_left() -> None:
    for state in positions(12):
        assert can_estimate(state)
        assert len(hand_features(state)) == 3
        tricks = estimated_tricks(state)
        assert sum(tricks) == pytest.approx(HAND_SIZE)
        for seat, estimate in enumerate(tricks):
            assert estimate >= state.tricks_won[seat]
        # Targets (or limits) sum to the deal's tricks, so the scores sum to nothing.
        assert sum(estimated_deal_scores(state)) == pytest.approx(0.0)


def test_the_estimate_foresees_the_tricks_taken_better_than_an_even_share() -> None:
    # Deals the fit never saw (another seed), played on by the player it was fitted to.
    model_error = even_error = 0.0
    for state in positions(30):
        estimate = estimated_tricks(state)
        left = HAND_SIZE - len(state.tricks)
        end = state.clone()
        while not end.deal_scores or len(end.deal_scores) == len(state.deal_scores):
            seat = end.to_act()[0]
            end.apply(seat, rules_action(end, seat))
        for seat in range(3):
            model_error += abs(estimate[seat] - end.tricks_won[seat])
            even_error += abs(state.tricks_won[seat] + left / 3 - end.tricks_won[seat])
    assert model_error < 0.8 * even_error


def test_the_engine_scores_tricks_as_it_scores_a_deal_played() -> None:
    state = positions(1)[0]
    assert state.scores_for_tricks(state.tricks_won) == state.deal_score()
    halves = [won + 0.5 for won in state.tricks_won]
    assert state.scores_for_tricks(halves) == pytest.approx(
        [score + (0.5 if state.contract != "MT" else -0.5) for score in state.deal_score()]
    )


def play_tricks(state: ThreeFiveEightState, seat: int, card: Any, tricks: int) -> GameState:
    """``card`` played, then the rule-based player at every seat until ``tricks`` are done."""
    state = state.clone()
    state.apply(seat, card)
    while len(state.tricks) < tricks or state.trick:
        actor = state.to_act()[0]
        state.apply(actor, rules_action(state, actor))
    return state


@pytest.mark.parametrize("cut_tricks", [1, 3])
def test_a_cut_playout_is_valued_by_the_model_where_it_stops(cut_tricks: int) -> None:
    for state in positions(6):
        seat = state.to_act()[0]
        card = state.legal_actions(seat)[0]
        stop = len(state.tricks) + 1 + cut_tricks
        value, work = evaluate(
            state, seat, card, rules_policy, random.Random(1), plan_game=True, cut_tricks=cut_tricks
        )
        end = play_tricks(state, seat, card, stop)
        assert isinstance(end, ThreeFiveEightState)
        expected = deal_advantage(estimated_deal_scores(end), seat, False) + outlook(end, seat)
        assert value == pytest.approx(expected)
        assert work == 3 * (stop - len(state.tricks)) + ESTIMATE_UNITS
        whole, whole_work = evaluate(state, seat, card, rules_policy, random.Random(1))
        assert whole_work == 3 * (HAND_SIZE - len(state.tricks))
        assert (2 * whole).is_integer()  # whole tricks against the mean of two others


def test_no_cut_in_the_last_deal_whose_end_decides_the_places() -> None:
    def last_deal(state: GameState) -> bool:
        return trick_start(state) and len(state.deal_scores) == DEALS - 1

    state = positions(1, last_deal)[0]
    assert cut_after(state, 3) is None
    seat = state.to_act()[0]
    card = state.legal_actions(seat)[0]
    cut = evaluate(state, seat, card, keen_policy, random.Random(2), plan_game=True, cut_tricks=3)
    whole = evaluate(state, seat, card, keen_policy, random.Random(2), plan_game=True)
    assert cut == whole


def test_no_cut_in_other_games() -> None:
    whist = next(rules_positions("whist", 4, seed=1, count=1, wanted=lambda state: True))
    assert cut_after(whist, 3) is None
    assert cut_after(positions(1)[0], 0) is None


def test_a_search_with_cut_playouts_weighs_more_worlds_for_the_same_work() -> None:
    more = 0
    for state in positions(4):
        seat = state.to_act()[0]
        view = state.observation(seat)
        if len(view["legal_actions"]) < 2:
            continue
        plain = SearchStrategy(budget_ms=5)
        cut = SearchStrategy(budget_ms=5, cut_tricks=2)
        plain.choose(view, random.Random(3))
        cut.choose(view, random.Random(3))
        assert cut.last_work >= cut.work_budget
        more += cut.last_worlds > 2 * plain.last_worlds
    assert more >= 3


@pytest.mark.parametrize("bad", [-1, 1.5])
def test_the_tricks_past_the_current_one_are_a_whole_number(bad: float) -> None:
    with pytest.raises(ValueError, match="whole number"):
        SearchStrategy(cut_tricks=bad)  # type: ignore[arg-type]


def test_a_level_takes_the_option_by_name() -> None:
    strategy = strategy_by_name("hard", cut_tricks=3.0)
    assert isinstance(strategy, SearchStrategy)
    assert strategy.cut_tricks == 3
