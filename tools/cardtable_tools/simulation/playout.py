"""Random legal playouts of whole games, the engine's workhorse for benchmarks and tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from cardtable.bots.random_play import random_action, shuffled_deck
from cardtable.engine.actions import Action
from cardtable.engine.facts import Fact
from cardtable.engine.game import GameSpec, GameState

#: Called after every deal or action with the state, the seat (None for a deal) and facts.
StepObserver = Callable[[GameState, int | None, Action | None, list[Fact]], None]


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
