"""Rebuilding a game from its inputs: deck orders and seat actions, in the order they happened.

A game is fully determined by its options, first dealer, deck orders and actions, so this is
the one way every consumer (a table reloaded from its log, a record being verified, an audit)
turns inputs back into a state. Each input yields its facts, so callers can compare them with
what a log claims happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from cardtable.engine.actions import Action
from cardtable.engine.cards import Card
from cardtable.engine.facts import Fact
from cardtable.engine.game import GameSpec, GameState


class DealInput(NamedTuple):
    """A deal: the deck order, top card first."""

    order: tuple[Card, ...]


class ActionInput(NamedTuple):
    """One seat's action."""

    seat: int
    action: Action


GameInput = DealInput | ActionInput


def apply_input(state: GameState, step: GameInput) -> list[Fact]:
    """Apply one input to ``state``; illegal or malformed inputs raise the engine's errors."""
    if isinstance(step, DealInput):
        return state.deal(step.order)
    return state.apply(step.seat, step.action)


def replay(
    spec: GameSpec,
    players: int,
    options: Mapping[str, Any] | Any,
    first_dealer: int,
    inputs: Iterable[GameInput],
) -> Iterator[tuple[GameState, GameInput, list[Fact]]]:
    """Yield ``(state, input, facts)`` after each input; the state object is the same each time."""
    state = spec.new_game(players, options, first_dealer)
    for step in inputs:
        yield state, step, apply_input(state, step)


def rebuild(
    spec: GameSpec,
    players: int,
    options: Mapping[str, Any] | Any,
    first_dealer: int,
    inputs: Iterable[GameInput],
    on_step: Callable[[], None] | None = None,
) -> GameState:
    """The state after applying every input; ``on_step`` runs after each (deadline checks)."""
    state = spec.new_game(players, options, first_dealer)
    for step in inputs:
        apply_input(state, step)
        if on_step is not None:
            on_step()
    return state
