"""The racing search's two parts: when a candidate leaves the race, and what a seat may spend."""

from __future__ import annotations

import doctest
import random
from types import ModuleType

import pytest

from cardtable.bots import budget, racing
from cardtable.bots.budget import MOST_BUDGETS_A_MOVE, MOST_BUDGETS_BANKED, WorkBank
from cardtable.bots.racing import DROP_Z, MIN_WORLDS, clearly_ahead, leader, still_in_race


def test_no_candidate_leaves_before_every_one_met_enough_worlds() -> None:
    values = [[1.0] * (MIN_WORLDS - 1), [0.0] * (MIN_WORLDS - 1)]
    assert still_in_race([0, 1], values) == [0, 1]
    values = [[1.0] * MIN_WORLDS, [0.0] * MIN_WORLDS]
    assert still_in_race([0, 1], values) == [0]


def test_a_candidate_leaves_once_its_shortfall_is_beyond_the_z_of_its_standard_error() -> None:
    # Shortfalls of 2 and 0 in turn: mean 1, standard deviation about 1.04 over 12 worlds, so
    # the mean is 3.3 standard errors of it: out at the default z, in at a z of 3.5.
    leader_values = [2.0, 0.0] * 6
    behind = [0.0] * 12
    assert still_in_race([0, 1], [leader_values, behind]) == [0]
    assert still_in_race([0, 1], [leader_values, behind], drop_z=3.5) == [0, 1]
    assert DROP_Z < 3.3 < 3.5


def test_a_noisy_close_candidate_stays_and_the_leader_always_stays() -> None:
    rng = random.Random(3)
    first = [rng.gauss(0, 5) for _ in range(30)]
    second = [value + rng.choice((-1.0, 1.0)) for value in first]
    assert sorted(still_in_race([0, 1], [first, second])) == [0, 1]
    assert leader([0, 1], [first, second]) in still_in_race([0, 1], [first, second])


def test_two_candidates_equal_in_every_world_are_one_and_the_earlier_stays() -> None:
    same = [3.0, -1.0, 0.0, 2.0, 5.0, 1.0] * 2
    assert len(same) >= MIN_WORLDS
    assert still_in_race([0, 1, 2], [[-4.0] * len(same), same, list(same)]) == [1]
    assert leader([1, 2], [[], same, list(same)]) == 1


def test_clearly_ahead_needs_a_mean_difference_beyond_z_standard_errors() -> None:
    # Differences of 2 and 0 in turn over 12 worlds: 3.3 standard errors.
    ahead, behind = [2.0, 0.0] * 6, [0.0] * 12
    assert clearly_ahead(ahead, behind, 3.0) and not clearly_ahead(ahead, behind, 3.5)
    assert not clearly_ahead(behind, ahead, 0.0)
    assert clearly_ahead([1.0] * 3, [0.0] * 3, 100.0)  # a constant difference is certain
    assert not clearly_ahead([5.0] * 3, [5.0] * 3, 0.0)  # equal is not ahead
    assert not clearly_ahead([9.0], [0.0], 0.0)  # one world proves nothing


def test_only_the_candidates_still_in_the_race_are_compared() -> None:
    values = [[9.0] * 12, [1.0, 0.0] * 6, [0.0, 1.0] * 6]
    assert still_in_race([1, 2], values) == [1, 2]


def test_the_bank_keeps_what_a_move_left_for_the_same_seat_only() -> None:
    bank = WorkBank(1000)
    bank.settle(2, spent=300)
    assert bank.allowance(2) == 1700
    assert bank.allowance(0) == 1000
    bank.settle(2, spent=1700)
    assert bank.allowance(2) == 1000


def test_no_move_may_spend_more_than_the_most_budgets() -> None:
    bank = WorkBank(100)
    for _ in range(20):
        bank.settle(0, spent=0)
    assert bank.allowance(0) == 100 * MOST_BUDGETS_A_MOVE


def test_a_run_of_clear_moves_pays_for_several_close_ones() -> None:
    bank = WorkBank(100)
    for _ in range(MOST_BUDGETS_BANKED):
        bank.settle(0, spent=0)
    # Each close move spends the most a move may; the bank pays the rest of it until it is out.
    close_moves = 0
    while bank.allowance(0) == 100 * MOST_BUDGETS_A_MOVE:
        bank.settle(0, spent=100 * MOST_BUDGETS_A_MOVE)
        close_moves += 1
    # Eight budgets banked pay three extra budgets twice; a bank capped at what one move may
    # spend paid for one.
    assert close_moves == 2


def test_an_overrun_is_owed_to_the_next_move() -> None:
    bank = WorkBank(100)
    bank.settle(1, spent=130)
    assert bank.allowance(1) == 70
    bank.settle(1, spent=500)
    assert bank.allowance(1) == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_over_many_moves_a_seat_spends_at_most_the_budget_a_move_and_one_overrun(
    seed: int,
) -> None:
    """Whatever each move spends of its allowance (at most one world over it), the seat's total
    is within one world of the budget times its moves."""
    rng = random.Random(seed)
    budget, world = 1000, 150
    bank = WorkBank(budget)
    total = 0
    for moves in range(1, 200):
        allowance = bank.allowance(0)
        spent = rng.choice([rng.randrange(1, max(allowance, 2)), allowance + rng.randrange(world)])
        bank.settle(0, spent)
        total += spent
        assert total <= budget * moves + world


@pytest.mark.parametrize("module", [racing, budget], ids=lambda m: m.__name__)
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0
