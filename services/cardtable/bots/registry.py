"""Strategies by name, as tables, the bot service and the tournament ask for them.

A name is a strategy's (``random``, ``rules``, ``search``) or a level's (``easy``, ``normal``,
``hard``: ``bots/levels.py``), which stands for a strategy made with the level's options.

>>> strategy_by_name("search", budget_ms=50).budget_ms
50.0
>>> strategy_by_name("hard").budget_ms
100.0
>>> sorted(STRATEGY_NAMES)
['random', 'rules', 'search']
>>> BOT_STRATEGY_NAMES
('easy', 'normal', 'hard', 'random', 'rules', 'search')
"""

from __future__ import annotations

from typing import Any

from cardtable.bots.levels import strategy_and_options
from cardtable.bots.names import BOT_STRATEGY_NAMES, STRATEGY_NAMES
from cardtable.bots.rules_based import RulesStrategy
from cardtable.bots.search import SearchStrategy
from cardtable.bots.strategy import RandomStrategy, Strategy

__all__ = ["BOT_STRATEGY_NAMES", "STRATEGY_NAMES", "strategy_by_name"]


def strategy_by_name(name: str, **options: Any) -> Strategy:
    """A new strategy called ``name``; ``options`` go to its constructor (``search``:
    ``budget_ms``, ``worlds``, ``playout``, ``set_candidates``, ``weigh_worlds``,
    ``weigh_contracts``, ``plan_game``, ``adaptive``, ``race_contracts``,
    ``merge_interchangeable``, ``contract_margin_z``, ``world_candidates``,
    ``endgame_cards``, ``contract_playout``, ``importance``, ``importance_power``,
    ``set_alternatives``, ``cut_tricks``, ``contract_sets``;
    ``rules``: ``keen``). A level's name
    gives its strategy with the level's options, ``options`` on top."""
    key, options = strategy_and_options(name, **options)
    if key == "search":
        try:
            return SearchStrategy(**options)
        except TypeError as error:
            raise ValueError(f"bad option for the search strategy: {error}") from None
    if key not in STRATEGY_NAMES:
        raise ValueError(
            f"unknown strategy {name!r}: choose one of {', '.join(BOT_STRATEGY_NAMES)}"
        )
    if key == "random":
        if options:
            raise ValueError(
                f"the random strategy takes no options, got {', '.join(sorted(options))}"
            )
        return RandomStrategy()
    try:
        return RulesStrategy(**options)
    except TypeError as error:
        raise ValueError(f"bad option for the rules strategy: {error}") from None
