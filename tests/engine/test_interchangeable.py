"""Interchangeable cards: two cards a game groups play out alike, through the engine's own rules.

The check is behavioural: from a position, the seat plays one card of a group in one copy of the
state and the other card in a second copy; then the rest of the deal is played at random in the
first copy and mirrored in the second (the seat's later play of either card is the other card
there). Every mirrored move must be legal and the deal must score the same. A group that held a
card another seat could beat in between, or a card of other points, fails it.
"""

from __future__ import annotations

import random

import pytest

from cardtable.bots.random_play import random_action
from cardtable.engine.actions import PLAY, PLAY_CARD
from cardtable.engine.cards import parse_card, parse_cards
from cardtable.engine.game import GameState
from cardtable.engine.interchangeable import by_card_number, interchangeable_groups, no_points
from tests.bots.positions import TABLES, random_positions, table_id
from tests.engine.test_hearts import SPLIT_HANDS, no_pass_deal, play_cards

MIRRORED_PLAYOUTS = 6


def play_cards_of(state: GameState, seat: int) -> list[int]:
    actions = state.legal_actions(seat)
    if len(actions) < 2 or actions[0].kind != PLAY_CARD:
        return []
    return [action.card for action in actions]


def mirrored_scores(
    state: GameState, seat: int, first: int, second: int, rng: random.Random
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The deal's scores with ``first`` played, and with ``second`` played and every later
    move mirrored (the two cards swapped)."""
    swap = {first: second, second: first}
    original, mirror = state.clone(), state.clone()
    deals = len(original.deal_scores)
    original.apply(seat, PLAY[first])
    mirror.apply(seat, PLAY[second])
    while len(original.deal_scores) == deals:
        actor = original.to_act()[0]
        assert mirror.to_act()[0] == actor
        action = random_action(original, actor, rng)
        original.apply(actor, action)
        mirror.apply(
            actor, PLAY[swap.get(action.card, action.card)] if action.card >= 0 else action
        )
    return original.deal_scores[-1], mirror.deal_scores[-1]


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_grouped_cards_play_out_alike(table: tuple[str, int, dict[str, object]]) -> None:
    game, players, options = table
    rng = random.Random(11)
    groups_checked = 0
    for state in random_positions(game, players, options, seed=4, count=150):
        seat = state.to_act()[0]
        cards = play_cards_of(state, seat)
        if not cards:
            continue
        groups = state.interchangeable_plays(seat, cards)
        assert sorted(card for group in groups for card in group) == sorted(cards)
        for group in groups:
            for other in group[1:]:
                for _ in range(MIRRORED_PLAYOUTS):
                    first, second = mirrored_scores(state, seat, group[0], other, rng)
                    assert first == second, (group, state.to_snapshot())
                groups_checked += 1
    assert groups_checked >= 5, "too few interchangeable cards met to check anything"


def test_a_card_another_seat_may_hold_between_two_keeps_them_apart() -> None:
    # Seat 0 holds 3 and 5 of a suit; the 4 is still out, so 3 and 5 part ways. Once the 4 is
    # played (known), they are one; the 9 stays alone behind the unseen 6, 7 and 8.
    apart = interchangeable_groups([3, 5, 9], {3, 5, 9}, range(13), by_card_number, no_points)
    together = interchangeable_groups([3, 5, 9], {3, 4, 5, 9}, range(13), by_card_number, no_points)
    assert apart == [[3], [5], [9]]
    assert together == [[3, 5], [9]]


def test_hearts_groups_touching_hearts_and_never_the_queen_with_her_neighbours() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    # Seat 0 leads the two of clubs; seat 1 follows with the ace, the others discard.
    play_cards(state, "2C AC 2D 2S")
    hearts = parse_cards("3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH")
    assert state.interchangeable_plays(1, hearts) == [hearts]
    spades = parse_cards("10S JS QS KS")
    assert state.interchangeable_plays(3, spades) == [
        parse_cards("10S JS"),
        [parse_card("QS")],
        [parse_card("KS")],
    ]
