"""The computer players' strategy names: what a table's settings may ask for.

A module of its own so that the table service can check a requested strategy without loading
the strategies themselves.
"""

STRATEGY_NAMES = ("random", "rules", "search")
