"""Sampling the hidden cards: one random deal consistent with everything a seat has seen.

The engine says what is hidden and where it may be (:func:`cardtable.engine.determinize.
hidden_cards`) and builds the state from a placement (:func:`~cardtable.engine.determinize.
state_from_view`); this module makes the random choice in between, so the engine stays free of
random generators.

A placement puts each unseen card in one place (a hand, the stock, a talon ...) so that every
place gets its count and no place gets a card it is known not to hold (a suit its player showed
void in, a card above what a 3-5-8 debtor gave back ...). Without constraints, giving each card
to a place with probability proportional to the room left there draws every deal uniformly; the
most constrained cards go first so that the draw rarely dead-ends, and when it does a matching
by augmenting paths finds a placement whenever one exists (one always does for a real view).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from cardtable.engine.cards import Card
from cardtable.engine.determinize import HiddenCards, hidden_cards, state_from_view
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import GameState

#: Quick proportional draws tried before the matching fallback.
DRAW_ATTEMPTS = 8


def sample_placement(hidden: HiddenCards, rng: random.Random) -> list[list[Card]]:
    """One random placement of ``hidden.unseen`` that respects every count and exclusion."""
    allowed = hidden.places_for
    cards = list(hidden.unseen)
    rng.shuffle(cards)
    cards.sort(key=lambda card: len(allowed[card]))
    for _ in range(DRAW_ATTEMPTS):
        placement = _proportional_draw(hidden, cards, allowed, rng)
        if placement is not None:
            break
    else:
        placement = _matching(hidden, cards, allowed, rng)
    # The order within a place can matter (Belote's stock is dealt from it): make it random.
    for cards_in_place in placement:
        rng.shuffle(cards_in_place)
    return placement


def _proportional_draw(
    hidden: HiddenCards,
    cards: list[Card],
    allowed: Mapping[Card, Sequence[int]],
    rng: random.Random,
) -> list[list[Card]] | None:
    room = list(hidden.counts)
    placement: list[list[Card]] = [[] for _ in hidden.places]
    randrange = rng.randrange
    for card in cards:
        options = [place for place in allowed[card] if room[place]]
        if not options:
            return None
        if len(options) == 1:
            place = options[0]
        else:
            total = 0
            for place in options:
                total += room[place]
            pick = randrange(total)
            for place in options:
                pick -= room[place]
                if pick < 0:
                    break
        room[place] -= 1
        placement[place].append(card)
    return placement


def _matching(
    hidden: HiddenCards,
    cards: list[Card],
    allowed: Mapping[Card, Sequence[int]],
    rng: random.Random,
) -> list[list[Card]]:
    """A placement by augmenting paths (Kuhn's algorithm with capacities)."""
    placement: list[list[Card]] = [[] for _ in hidden.places]

    def move_in(card: Card, visited: set[int], current: int = -1) -> bool:
        """Put ``card`` in a place other than ``current``, moving others along if need be."""
        options = [place for place in allowed[card] if place != current and place not in visited]
        rng.shuffle(options)
        for place in options:
            if place in visited:
                continue
            visited.add(place)
            if len(placement[place]) < hidden.counts[place]:
                placement[place].append(card)
                return True
            for other in list(placement[place]):
                if move_in(other, visited, place):
                    placement[place].remove(other)
                    placement[place].append(card)
                    return True
        return False

    for card in cards:
        if not move_in(card, set()):
            raise InvalidInput("no deal is consistent with this view")
    return placement


def sample_world(
    observation: Mapping[str, Any],
    rng: random.Random,
    hidden: HiddenCards | None = None,
) -> GameState:
    """A whole state consistent with ``observation``, its hidden cards drawn with ``rng``."""
    hidden = hidden if hidden is not None else hidden_cards(observation)
    return state_from_view(observation, sample_placement(hidden, rng), hidden)
