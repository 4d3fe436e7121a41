"""The levels: each names a strategy and its options in one place, and ``easy`` plays whole games
of every game legally and better than chance, so it never throws a game away."""

from __future__ import annotations

import doctest
import random
from types import ModuleType
from typing import Any

import pytest

from cardtable.bots import levels, registry
from cardtable.bots.levels import LEVEL_NAMES, LEVELS, strategy_and_options
from cardtable.bots.names import BOT_STRATEGY_NAMES, STRATEGY_NAMES
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.rules_based import RulesStrategy
from cardtable.bots.search import SearchStrategy
from cardtable.engine.registry import game_spec
from cardtable_tools.tournament import Board, play_game, run_tournament
from tests.bots.positions import TABLES, table_id


@pytest.mark.parametrize(
    ("level", "kind", "budget_ms"),
    [
        ("easy", RulesStrategy, None),
        ("normal", SearchStrategy, 20.0),
        ("hard", SearchStrategy, 100.0),
    ],
)
def test_each_level_is_its_strategy_with_its_options(
    level: str, kind: type, budget_ms: float | None
) -> None:
    strategy = strategy_by_name(level)
    assert isinstance(strategy, kind)
    assert strategy.name == LEVELS[level].strategy
    if budget_ms is not None:
        assert isinstance(strategy, SearchStrategy)
        assert strategy.budget_ms == budget_ms and strategy.worlds is None
    assert strategy_by_name(f" {level.upper()} ").name == strategy.name


def test_only_hard_weighs_its_worlds_plans_races_plays_out_keenly_and_widens_passes() -> None:
    normal, hard = strategy_by_name("normal"), strategy_by_name("hard")
    assert isinstance(normal, SearchStrategy) and isinstance(hard, SearchStrategy)
    assert (normal.weigh_worlds, normal.plan_game, normal.adaptive) == (False, False, False)
    assert (normal.merge_interchangeable, normal.playout) == (False, "rules")
    assert normal.set_alternatives is False
    assert hard.adaptive is True
    assert set(hard.set_alternatives) == {"hearts"}  # type: ignore[arg-type]
    assert set(hard.plan_game) == {"whist", "358", "hearts"}  # type: ignore[arg-type]
    assert (hard.merge_interchangeable, hard.playout) == (True, "keen")
    assert set(hard.weigh_worlds) == {"whist", "358", "belote"}  # type: ignore[arg-type]
    # Belote's takes and names draw uniform worlds: weighing them did not beat the search.
    assert set(hard.weigh_contracts) == {"whist", "358"}  # type: ignore[arg-type]


def test_levels_are_names_a_table_may_give_and_climb_by_budget() -> None:
    assert LEVEL_NAMES == ("easy", "normal", "hard")
    assert set(BOT_STRATEGY_NAMES) == {*LEVEL_NAMES, *STRATEGY_NAMES}
    assert all(level.strategy in STRATEGY_NAMES for level in LEVELS.values())
    normal, hard = (strategy_and_options(name)[1]["budget_ms"] for name in ("normal", "hard"))
    assert 0 < normal < hard


def test_options_given_go_on_top_of_a_levels_own() -> None:
    shrunk = strategy_by_name("hard", budget_ms=2)
    assert isinstance(shrunk, SearchStrategy) and shrunk.budget_ms == 2.0
    assert strategy_and_options("normal", worlds=3) == ("search", {"budget_ms": 20.0, "worlds": 3})
    with pytest.raises(ValueError, match="bad option for the rules strategy"):
        strategy_by_name("easy", budget_ms=5)


def test_an_unknown_name_lists_the_levels_and_the_strategies() -> None:
    with pytest.raises(ValueError) as refused:
        strategy_by_name("expert")
    assert str(refused.value) == (
        "unknown strategy 'expert': choose one of easy, normal, hard, random, rules, search"
    )


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_easy_plays_whole_games_legally(table: tuple[str, int, dict[str, Any]]) -> None:
    """The tournament's game loop applies each move through the engine, which raises on an
    illegal one; every seat is easy, from its observation alone."""
    game, players, options = table
    spec = game_spec(game)
    easy = strategy_by_name("easy")
    for seed in range(2):
        board = Board(spec, players, f"levels/{seed}")
        rngs = [random.Random(f"{seed}/{seat}") for seat in range(players)]
        totals, places = play_game(spec, options, board, [easy] * players, rngs)
        assert len(totals) == len(places) == players and min(places) == 1


@pytest.mark.parametrize(
    ("game", "players"), [("hearts", 4), ("whist", 4), ("358", 3), ("belote", 4)]
)
def test_easy_beats_chance_in_every_game(game: str, players: int) -> None:
    """Sensible, not only legal: over duplicate boards easy scores better than a random player
    on the same cards."""
    options = {"quick": True} if game == "hearts" else None
    # Belote's partners share a score: easy holds one team, chance the other.
    seats = ["easy", "random"] * 2 if game == "belote" else ["easy", *["random"] * (players - 1)]
    report = run_tournament(game, seats, players * 3, seed=11, options=options)
    assert report["ladder"] == ["easy", "random"]
    assert report["easy"]["advantage"] > 0


@pytest.mark.parametrize("module", [levels, registry], ids=lambda m: m.__name__)
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0
