"""Random legal playouts of whole games, the engine's workhorse for benchmarks and tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from cardtable.engine.actions import Action
from cardtable.engine.facts import Fact
from cardtable.engine.game import GameSpec, GameState

#: Called after every deal or action with the state, the seat (None for a deal) and facts.
StepObserver = Callable[[GameState, int | None, Action | None, list[Fact]], None]


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


def play_random_game(
    spec: GameSpec,
    players: int,
    options: Mapping[str, Any] | None,
    rng: random.Random,
    observer: StepObserver | None = None,
) -> tuple[GameState, int, int]:
    """Play one whole game with random legal actions; return the state, deals and actions."""
    state = spec.new_game(players, options, rng.randrange(players))
    deals = actions = 0
    while not state.is_over():
        if state.needs_deal():
            facts = state.deal(shuffled_deck(state, rng))
            deals += 1
            if observer is not None:
                observer(state, None, None, facts)
            continue
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        action = random_action(state, seat, rng)
        facts = state.apply(seat, action)
        actions += 1
        if observer is not None:
            observer(state, seat, action, facts)
    return state, deals, actions
