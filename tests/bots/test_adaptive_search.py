"""The adaptive search: clear moves end early, close ones spend what those left, and a seat's
work over a game stays within its budget a move."""

from __future__ import annotations

import random

import pytest

from cardtable.bots.budget import MOST_BUDGETS_A_MOVE
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.search import SearchStrategy
from cardtable.engine.actions import BID, parse_action
from cardtable.engine.registry import game_spec
from tests.bots.positions import random_positions


def play_with(
    strategy: SearchStrategy, game: str, players: int, seed: int, decisions: int
) -> list[int]:
    """Play a game with ``strategy`` at every seat until it has made ``decisions`` decisions
    (moves with one legal action are not decisions and spend nothing); the work of each."""
    rng = random.Random(seed)
    state = game_spec(game).new_game(players, None, 0)
    spent: list[int] = []
    while len(spent) < decisions:
        if state.needs_deal():
            state.deal(shuffled_deck(state, rng))
            continue
        seat = state.to_act()[0]
        action = strategy.choose(state.observation(seat), rng)
        if strategy.last_work:
            spent.append(strategy.last_work)
        state.apply(seat, parse_action(action))
    return spent


@pytest.mark.parametrize(("game", "players"), [("hearts", 4), ("whist", 4), ("358", 3)])
def test_a_seat_spends_the_budget_a_move_on_average_and_a_close_move_more(
    game: str, players: int
) -> None:
    strategy = SearchStrategy(budget_ms=4, adaptive=True)
    budget = strategy.work_budget
    spent = play_with(strategy, game, players, seed=5, decisions=30)
    # Every seat shares one strategy here, so the bound is over all seats' decisions together:
    # within one overrun a seat.
    assert sum(spent) <= budget * len(spent) + budget * players
    assert min(spent) < budget, "no move was clear enough to end its race early"
    assert max(spent) > budget, "no move spent what the clear ones left"
    assert max(spent) <= budget * MOST_BUDGETS_A_MOVE + budget


def test_a_clear_move_banks_what_it_left_for_the_seats_next_move() -> None:
    strategy = SearchStrategy(budget_ms=4, adaptive=True)
    assert strategy.bank is not None
    for state in random_positions("hearts", 4, {"quick": True}, seed=9, count=200):
        seat = state.to_act()[0]
        before = strategy.bank.allowance(seat)
        strategy.choose(state.observation(seat), random.Random(2))
        if 0 < strategy.last_work < before:
            assert strategy.bank.allowance(seat) == min(
                strategy.work_budget + before - strategy.last_work,
                strategy.work_budget * MOST_BUDGETS_A_MOVE,
            )
            return
    pytest.fail("no Hearts move ended its race before its allowance")


def test_the_same_observation_gives_the_same_move_to_a_fresh_adaptive_search() -> None:
    positions = list(random_positions("whist", 4, {}, seed=12, count=12))
    for state in positions:
        seat = state.to_act()[0]
        observation = state.observation(seat)
        moves = {
            SearchStrategy(budget_ms=3, adaptive=True).choose(observation, random.Random(4))
            for _ in range(2)
        }
        assert len(moves) == 1


def test_a_fixed_number_of_worlds_has_no_bank() -> None:
    assert SearchStrategy(worlds=5, adaptive=True).bank is None
    assert SearchStrategy(budget_ms=5).bank is None


def bid_work(strategy: SearchStrategy) -> list[tuple[int, int]]:
    """The allowance and the work of each Whist bid ``strategy`` makes in one deal's bidding."""
    assert strategy.bank is not None
    rng = random.Random(3)
    state = game_spec("whist").new_game(4, None, 0)
    state.deal(shuffled_deck(state, rng))
    spent: list[tuple[int, int]] = []
    while any(action.kind == BID for action in state.legal_actions(state.to_act()[0])):
        seat = state.to_act()[0]
        allowance = strategy.bank.allowance(seat)
        action = strategy.choose(state.observation(seat), rng)
        if strategy.last_work:
            spent.append((allowance, strategy.last_work))
        state.apply(seat, parse_action(action))
    return spent


def test_without_racing_contracts_a_bid_spends_its_whole_allowance() -> None:
    bids = bid_work(SearchStrategy(budget_ms=4, adaptive=True, race_contracts=False))
    assert bids, "the deal's bidding had no decision"
    assert all(work >= allowance for allowance, work in bids)
    raced = bid_work(SearchStrategy(budget_ms=4, adaptive=True))
    assert any(work < allowance for allowance, work in raced), "no bid ended its race early"
