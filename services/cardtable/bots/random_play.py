"""Uniformly random legal play: the random computer player's choices, and the deals and moves
the search samples and the simulations play out."""

from __future__ import annotations

import random

from cardtable.engine.actions import Action
from cardtable.engine.game import GameState


def shuffled_deck(state: GameState, rng: random.Random) -> list[int]:
    """A uniformly shuffled deck order for the state's next deal."""
    deck = list(state.deck())
    rng.shuffle(deck)
    return deck


def random_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """A uniformly random legal action for ``seat``.

    Compound actions (pass three, discard four) are sampled from their card set directly,
    which is the same distribution as choosing among all combinations, without listing them.
    """
    choice = state.card_set_choice(seat)
    if choice is not None:
        return choice.make(rng.sample(choice.cards, choice.count))
    return rng.choice(state.legal_actions(seat))
