"""A 3-5-8 declarer's contracts still to play valued as a set: its contract budget."""

from __future__ import annotations

import doctest
import random

import pytest

from cardtable.bots import contract_sets
from cardtable.bots.contract_sets import contract_set_values, contracts_left_worth, set_key
from cardtable.bots.outlook import contracts_left_value, forced_worth, outlook
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.bots.search import evaluate, rules_policy
from cardtable.engine.games.three_five_eight.rules import CONTRACTS, ThreeFiveEightState
from cardtable.engine.registry import game_spec


def test_every_kind_of_set_has_a_value_and_none_left_is_worth_nothing() -> None:
    values = contract_set_values()
    assert len(values) == 5 * 2 * 2  # 0-4 trump contracts, with or without NT, MT
    assert contracts_left_worth([]) == 0.0
    assert contracts_left_worth(CONTRACTS) == values["T4 NT MT"]


def test_sets_that_differ_only_in_their_trump_suits_are_worth_the_same() -> None:
    assert contracts_left_worth(["S", "H", "MT"]) == contracts_left_worth(["D", "C", "MT"])
    assert set_key(["S", "NT"]) == set_key(["C", "NT"]) == "T1 NT"


def test_one_contract_left_is_worth_what_it_scores_forced() -> None:
    """Two measurements of one thing: the set of one is the contract forced."""
    for contract in ("S", "NT", "MT"):
        assert contracts_left_worth([contract]) == pytest.approx(forced_worth([contract]), abs=0.15)


def test_a_choice_among_several_is_worth_more_than_their_forced_values() -> None:
    for size in range(2, len(CONTRACTS) + 1):
        for start in range(len(CONTRACTS) - size + 1):
            left = list(CONTRACTS[start : start + size])
            assert contracts_left_worth(left) > forced_worth(left), left


def test_the_first_choice_spends_no_trump_sooner_than_the_forced_values_say() -> None:
    """What the set values change: keeping NT, which suits few hands, costs more than a trump."""
    after = {
        chosen: contracts_left_worth([c for c in CONTRACTS if c != chosen]) for chosen in CONTRACTS
    }
    assert after["NT"] - after["S"] > 0.3
    forced_after = {
        chosen: forced_worth([c for c in CONTRACTS if c != chosen]) for chosen in CONTRACTS
    }
    assert forced_after["NT"] - forced_after["S"] < 0.3


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(contract_sets)
    assert results.attempted > 0 and results.failed == 0


def first_deal_played() -> ThreeFiveEightState:
    state = game_spec("358").new_game(3, None, 0)
    assert isinstance(state, ThreeFiveEightState)
    rng = random.Random(4)
    state.deal(shuffled_deck(state, rng))
    while not state.deal_scores:
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))
    return state


def test_by_sets_each_seat_counts_its_contracts_left_as_a_whole() -> None:
    state = first_deal_played()
    worth = [
        contracts_left_worth([c for c in CONTRACTS if c not in state.used[seat]])
        for seat in range(3)
    ]
    for seat in range(3):
        others = [value for other, value in enumerate(worth) if other != seat]
        expected = worth[seat] - sum(others) / 2
        assert contracts_left_value(state, seat, by_sets=True) == pytest.approx(expected)
        assert outlook(state, seat, contract_sets=True) == pytest.approx(expected)
    declarer = next(seat for seat in range(3) if state.used[seat])
    assert contracts_left_value(state, declarer, by_sets=True) != pytest.approx(
        contracts_left_value(state, declarer)
    )


def test_a_planning_search_adds_the_set_values_where_the_playout_ends() -> None:
    state = game_spec("358").new_game(3, None, 0)
    rng = random.Random(9)
    state.deal(shuffled_deck(state, rng))
    seat = state.to_act()[0]
    for action in state.legal_actions(seat):
        planned, _ = evaluate(state, seat, action, rules_policy, random.Random(1), plan_game=True)
        by_sets, _ = evaluate(
            state, seat, action, rules_policy, random.Random(1), plan_game=True, contract_sets=True
        )
        finished = state.clone()
        finished.apply(seat, action)
        while not finished.deal_scores:
            actor = finished.to_act()[0]
            finished.apply(actor, rules_policy(finished, actor, random.Random(1)))
        assert by_sets - planned == pytest.approx(
            outlook(finished, seat, contract_sets=True) - outlook(finished, seat)
        )
