"""The computer players' levels, ``easy``, ``normal`` and ``hard``: a strategy and its options.

A person choosing opponents asks for a strength, not an algorithm: a table's settings, the
bot service and the tournament accept a level wherever they accept a strategy's name. This module
is the one place that says what each level is. It holds data only, so that the table service can
check a level's name without loading the strategies.

The levels are rungs of a ladder the tournament measures (docs/proving-it.md, "Levels"):

- ``easy`` is the rule-based player: it bids from hand strength, plays sensible cards and passes
  or discards the dangerous ones, every move legal. It does not look ahead, so it is beatable,
  but it never throws a game away as a random player would.
- ``normal`` is the search at 20 ms of work a move, the budget the table service gives a
  timed-out move (``table_service/stand_in.py``); it weighs every candidate over deals drawn
  from what the seat has seen, each played out by the rule-based player.
- ``hard`` is the search at five times that, and smarter: in Whist, 3-5-8 and Belote it draws
  its deals in proportion to how well they explain the others' bids, contracts and, in Whist
  and 3-5-8, plays (``bots/beliefs.py``; in Belote its own take or name draws them uniformly;
  in Whist it keeps one world of two drawn, elsewhere of four),
  and (but in Belote) values a deal's end for the rest of the game too: the win, Whist runs,
  3-5-8 contracts still to play (``bots/outlook.py``). Its budget is an average: it stops
  weighing a move once one candidate is clearly best and spends what that leaves on the
  seat's close moves (``bots/racing.py``, ``bots/budget.py``); it weighs one card of each group
  of interchangeable ones (``engine/interchangeable.py``); its playouts are the keen rule-based
  player, which in Hearts, Belote and Whist plays with a few habits of stronger players
  (``bots/rules``); in Hearts it weighs passes of other kinds than the rule-based one's too,
  one keeping the high cards and those emptying a short suit. It stays below the plain
  ``search`` default (200 ms) so that a table of hard players costs the bot service a bounded
  share of a core.

The budgets are work (``bots/search.py``), so a level plays the same on a busy machine.

>>> strategy_and_options("hard")[1]["adaptive"], strategy_and_options("hard")[1]["budget_ms"]
(True, 100.0)
>>> strategy_and_options("HARD", budget_ms=5)[1]["budget_ms"]
5
>>> strategy_and_options("rules")
('rules', {})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Level:
    """A level: the strategy it plays and the options that strategy is made with."""

    strategy: str
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


#: The games where hard draws its worlds weighted (``bots/beliefs.py``). Not Hearts: there the
#: candidate deals a kept world costs (and reading the plays on each) leave too few worlds for
#: the budget, which costs more than the better worlds gain (docs/proving-it.md, "Levels").
WEIGHS_WORLDS_IN = ("whist", "358", "belote")

#: The games where hard draws a bid's or contract choice's worlds weighted too. Not Belote:
#: there hard drawing takes and names uniformly came further ahead of the search at 200 ms
#: than weighing them (docs/proving-it.md, "Settings the figures chose").
WEIGHS_CONTRACTS_IN = ("whist", "358")

#: Deals hard draws for each world it keeps, by game (four where not named). In Whist two: the
#: worlds the work saved buys gained more than the better placed cards (docs/proving-it.md,
#: "Settings the figures chose").
WORLD_CANDIDATES_IN: Mapping[str, int] = MappingProxyType({"whist": 2})

#: The games where hard values a deal's end for the rest of the game (``bots/outlook.py``).
#: Not Belote: there hard planning fell well behind the search at 200 ms and level with it
#: without (docs/proving-it.md, "Settings the figures chose").
PLANS_GAME_IN = ("whist", "358", "hearts")

#: The games where hard weighs the rule-based player's sets of cards of other kinds beside its
#: own (Hearts: a pass for the moon, passes that empty a short suit): one card from the rule's
#: pass, the search never reached the best pass of many hands (docs/proving-it.md, "Levels").
#: Not 3-5-8: where the declarer's discards of other kinds changed hard's discard, the deals
#: played on did no better (docs/proving-it.md, "Settings the figures chose").
SETS_ALTERNATIVES_IN = ("hearts",)

#: Every level, weakest first.
LEVELS: Mapping[str, Level] = MappingProxyType(
    {
        "easy": Level("rules"),
        "normal": Level("search", MappingProxyType({"budget_ms": 20.0})),
        "hard": Level(
            "search",
            MappingProxyType(
                {
                    "budget_ms": 100.0,
                    "weigh_worlds": WEIGHS_WORLDS_IN,
                    "weigh_contracts": WEIGHS_CONTRACTS_IN,
                    "world_candidates": WORLD_CANDIDATES_IN,
                    "plan_game": PLANS_GAME_IN,
                    "adaptive": True,
                    "merge_interchangeable": True,
                    "playout": "keen",
                    "set_alternatives": SETS_ALTERNATIVES_IN,
                }
            ),
        ),
    }
)

LEVEL_NAMES = tuple(LEVELS)


def strategy_and_options(name: str, **options: Any) -> tuple[str, dict[str, Any]]:
    """The strategy ``name`` stands for and the options to make it with: a level's own with
    ``options`` on top (a test may shrink a level's budget), or a strategy's name as it is."""
    key = name.strip().lower()
    level = LEVELS.get(key)
    if level is None:
        return key, dict(options)
    return level.strategy, {**level.options, **options}
