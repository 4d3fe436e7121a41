"""Random positions of every game: states reached by random legal play, for bot tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from cardtable.bots.random_play import random_action, shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.engine.game import GameState
from cardtable.engine.registry import game_spec

#: Every game at every table size, with its rule options on and off.
TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("hearts", 4, {"quick": True}),
    *(("whist", players, {}) for players in range(3, 7)),
    ("whist", 4, {"must_trump": True}),
    ("358", 3, {}),
    ("358", 3, {"trump_beat": True}),
    ("belote", 4, {}),
]


def table_id(table: tuple[str, int, dict[str, Any]]) -> str:
    game, players, options = table
    flags = ",".join(name for name, on in options.items() if on)
    return f"{game}-{players}" + (f"-{flags}" if flags else "")


def random_positions(
    game: str, players: int, options: dict[str, Any], seed: int, count: int, chance: float = 0.15
) -> Iterator[GameState]:
    """About ``count`` states where someone must act, from random games (each a clone)."""
    rng = random.Random(seed)
    spec = game_spec(game)
    found = 0
    while found < count:
        state = spec.new_game(players, options, rng.randrange(players))
        while not state.is_over() and found < count:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            if rng.random() < chance:
                found += 1
                yield state.clone()
            seat = rng.choice(state.to_act())
            state.apply(seat, random_action(state, seat, rng))


def rules_positions(
    game: str, players: int, seed: int, count: int, wanted: Callable[[GameState], bool]
) -> Iterator[GameState]:
    """``count`` states from games the rule-based player plays at every seat, at most one a
    deal: the first where ``wanted`` holds (each a clone)."""
    rng = random.Random(seed)
    spec = game_spec(game)
    found = 0
    while found < count:
        state = spec.new_game(players, None, rng.randrange(players))
        while not state.is_over() and found < count:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            if wanted(state):
                found += 1
                yield state.clone()
                deals = len(state.deal_scores)
                while len(state.deal_scores) == deals:
                    seat = state.to_act()[0]
                    state.apply(seat, rules_action(state, seat))
                continue
            seat = state.to_act()[0]
            state.apply(seat, rules_action(state, seat))


def as_protobuf_struct(value: Any) -> Any:
    """``value`` as it comes back from a protobuf ``Struct``: every number a float."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {key: as_protobuf_struct(item) for key, item in value.items()}
    return [as_protobuf_struct(item) for item in value]
