"""The move the table service makes for a seat whose turn timed out: its computer player's.

A single timeout is most often a person who looked away; the seat stays theirs, and the move
made in their place should be one the table's computer players would make (``bot_strategy`` in
its settings, at that level), not a random card that throws the deal away for them (#28). The
table service chooses it itself, from that seat's view alone, exactly as the bot service would:
the strategy is given the decoded observation and a generator seeded from the environment's
secure seed, so a test that fixes the seed knows the move.

The ``search`` strategy, and a level that plays it (``bots/levels.py``), thinks here for
:data:`TIMEOUT_SEARCH_BUDGET_MS` at most, whatever the bot service's budget or the level's. The
table service's CPU is what every table's moves are made with, and timeouts come in bursts (a
player who drops times out at every turn; a replica adopting a failed one's tables finds many
deadlines past at once): a full budget per timed-out move would delay the moves of every other
table on the replica. At the cap the search still plays out a few worlds from the rules player's
choice, so the stand-in is no weaker than that player.

>>> stand_in_strategy("search").budget_ms, stand_in_strategy("hard").budget_ms
(20.0, 20.0)
>>> stand_in_strategy("easy").name
'rules'
>>> stand_in_strategy("").name, stand_in_strategy("a newer one").name
('rules', 'rules')
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cardtable.bots.levels import strategy_and_options
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import DEFAULT_BUDGET_MS
from cardtable.bots.strategy import Strategy, is_offered
from cardtable.platform.logging import get_logger

#: Work a timed-out move may cost the table service (the search's budget, in ms of a core).
TIMEOUT_SEARCH_BUDGET_MS = 20.0
#: For a table whose settings name no strategy, or one this build does not have: the
#: computer players' own default (bot_service/settings.py), so that the game goes on.
FALLBACK_STRATEGY = "rules"

_log = get_logger(__name__)


def stand_in_strategy(name: str) -> Strategy:
    """The strategy that moves for a timed-out seat at a table whose ``bot_strategy`` is
    ``name`` (a strategy or a level); the search with its budget capped."""
    try:
        key, options = strategy_and_options(name.strip() or FALLBACK_STRATEGY)
        if key == "search":
            budget = min(
                float(options.get("budget_ms", DEFAULT_BUDGET_MS)), TIMEOUT_SEARCH_BUDGET_MS
            )
            # a fixed number of worlds would not stop at the cap
            options = {**options, "budget_ms": budget, "worlds": None}
        return strategy_by_name(key, **options)
    except ValueError:
        return strategy_by_name(FALLBACK_STRATEGY)


def stand_in_move(strategy: Strategy, observation: Mapping[str, Any], seed: bytes) -> str | None:
    """``strategy``'s move for the seat whose ``observation`` it is, or None if it fails or
    chooses an action the view does not offer (the caller then moves at random: a timed-out
    turn must be played whatever the strategy does)."""
    try:
        action = strategy.choose(observation, random.Random(seed))
    except Exception:
        _log.exception("stand-in strategy failed", extra={"strategy": strategy.name})
        return None
    if not is_offered(action, observation):
        _log.warning(
            "stand-in strategy chose an action the view does not offer",
            extra={"strategy": strategy.name, "action": action},
        )
        return None
    return action
