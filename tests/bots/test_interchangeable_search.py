"""The search weighs one card of each interchangeable group: touching cards do not split its
budget."""

from __future__ import annotations

import random

from cardtable.bots.card_plays import one_of_each_kind
from cardtable.bots.search import SearchStrategy
from cardtable.engine.actions import PLAY, parse_action
from cardtable.engine.cards import parse_cards
from tests.engine.test_hearts import SPLIT_HANDS, no_pass_deal, play_cards


def test_a_hand_of_touching_cards_is_one_move_and_costs_no_worlds() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S")  # seat 1 wins with the ace and holds touching hearts only
    observation = state.observation(1)
    merging = SearchStrategy(budget_ms=2, merge_interchangeable=True)
    move = merging.choose(observation, random.Random(1))
    assert parse_action(move) in state.legal_actions(1)
    assert merging.last_worlds == 0
    plain = SearchStrategy(budget_ms=2)
    plain.choose(observation, random.Random(1))
    assert plain.last_worlds > 0


def test_one_of_each_kind_keeps_the_first_of_each_group_in_order() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S")
    # Seat 3 holds every spade but the two: the ten and jack are one, the queen (13 points)
    # and the king each alone.
    candidates = [PLAY[card] for card in parse_cards("JS 10S QS KS")]
    assert one_of_each_kind(state, 3, candidates) == [
        PLAY[card] for card in parse_cards("JS QS KS")
    ]
