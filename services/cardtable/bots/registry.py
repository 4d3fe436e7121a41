"""Strategies by name, as tables, the bot service and the tournament ask for them.

>>> strategy_by_name("search", budget_ms=50).budget_ms
50.0
>>> sorted(STRATEGY_NAMES)
['random', 'rules', 'search']
"""

from __future__ import annotations

from typing import Any

from cardtable.bots.names import STRATEGY_NAMES
from cardtable.bots.rules_based import RulesStrategy
from cardtable.bots.search import SearchStrategy
from cardtable.bots.strategy import RandomStrategy, Strategy

__all__ = ["STRATEGY_NAMES", "strategy_by_name"]


def strategy_by_name(name: str, **options: Any) -> Strategy:
    """A new strategy called ``name``; ``options`` go to its constructor (only ``search`` has
    any: ``budget_ms``, ``worlds``, ``playout``, ``set_candidates``)."""
    key = name.strip().lower()
    if key == "search":
        try:
            return SearchStrategy(**options)
        except TypeError as error:
            raise ValueError(f"bad option for the search strategy: {error}") from None
    if options:
        raise ValueError(f"the {key} strategy takes no options, got {', '.join(sorted(options))}")
    if key == "random":
        return RandomStrategy()
    if key == "rules":
        return RulesStrategy()
    raise ValueError(f"unknown strategy {name!r}: choose one of {', '.join(STRATEGY_NAMES)}")
