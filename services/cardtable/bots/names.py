"""The computer players' names: what a table's settings may ask for.

A module of its own so that the table service can check a requested strategy or level without
loading the strategies themselves.
"""

from cardtable.bots.levels import LEVEL_NAMES

#: The strategies, by the algorithm they play.
STRATEGY_NAMES = ("random", "rules", "search")
#: Every name a table's ``bot_strategy``, ``BOT_STRATEGY`` and the tournament's seats accept:
#: the levels (``bots/levels.py``) and the strategies.
BOT_STRATEGY_NAMES = (*LEVEL_NAMES, *STRATEGY_NAMES)
