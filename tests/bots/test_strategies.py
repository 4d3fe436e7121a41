"""Every strategy answers every position of every game, at every table size, with a legal
action, from the seat's observation alone (engine ints or protobuf floats alike)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardtable.bots.registry import strategy_by_name
from cardtable.bots.strategy import Strategy
from cardtable.engine.actions import parse_action
from tests.bots.positions import TABLES, as_protobuf_struct, random_positions, table_id

POSITIONS_PER_TABLE = 25


def strategies() -> list[Strategy]:
    return [
        strategy_by_name("random"),
        strategy_by_name("rules"),
        strategy_by_name("search", worlds=2),
    ]


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_every_strategy_plays_legally(table: tuple[str, int, dict[str, Any]]) -> None:
    game, players, options = table
    rng = random.Random(5)
    phases: set[str] = set()
    for state in random_positions(game, players, options, seed=players, count=POSITIONS_PER_TABLE):
        for seat in state.to_act():
            observation = state.observation(seat)
            phases.add(state.phase)
            for strategy in strategies():
                text = strategy.choose(observation, rng)
                reason = state.why_illegal(seat, parse_action(text))
                assert reason is None, f"{strategy.name} chose {text!r} in {state.phase}: {reason}"
    assert len(phases) >= 2


@pytest.mark.parametrize("game", ["hearts", "whist", "358", "belote"])
def test_numbers_as_floats_read_the_same(game: str) -> None:
    players = 3 if game == "358" else 4
    options = {"quick": True} if game == "hearts" else {}
    for state in random_positions(game, players, options, seed=9, count=8):
        seat = state.to_act()[0]
        observation = state.observation(seat)
        for name in ("rules", "search"):
            strategy = (
                strategy_by_name(name, worlds=2) if name == "search" else strategy_by_name(name)
            )
            plain = strategy.choose(observation, random.Random(1))
            floats = strategy.choose(as_protobuf_struct(observation), random.Random(1))
            assert plain == floats


def test_unknown_strategies_and_options_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        strategy_by_name("oracle")
    with pytest.raises(ValueError, match="bad option for the rules strategy"):
        strategy_by_name("rules", budget_ms=5)
    with pytest.raises(ValueError, match="the random strategy takes no options"):
        strategy_by_name("random", keen=True)
    with pytest.raises(ValueError, match="search strategy"):
        strategy_by_name("search", depth=3)


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_rules_read_only_what_the_seat_sees(table: tuple[str, int, dict[str, Any]]) -> None:
    """The rule-based player decides on a state rebuilt with random hidden cards: whichever
    are drawn, the choice is the same, so it never depends on cards the seat cannot see."""
    game, players, options = table
    rules = strategy_by_name("rules")
    for state in random_positions(game, players, options, seed=17, count=15):
        seat = state.to_act()[0]
        observation = state.observation(seat)
        choices = {rules.choose(observation, random.Random(seed)) for seed in range(4)}
        assert len(choices) == 1, choices
