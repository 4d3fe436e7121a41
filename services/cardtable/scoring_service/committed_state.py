"""The projection's committed rows kept in memory, for a writer that owns its schema alone.

A rebuild is the only writer of the schema it builds, so what it committed is exactly what
the schema holds. Keeping the tables being played and the ratings in memory between
transactions saves reading them back before every run of messages: with nothing else
writing, a table or rating missing here is missing from the schema too (``complete``), and
no query is needed to learn it.

Two things can break that promise, and both fall back to reading PostgreSQL, never to a guess:

- a transaction that fails has already folded some batches onto these objects, so every
  failure forgets everything (:meth:`forget`) and the writer reads the schema again;
- past ``max_tables`` the oldest tables are dropped from memory; their ids are remembered, so
  only those few are read back if they ever get another batch (a rematch, a late leave).

The live consumer does not use this: another replica may write the same schema at any time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cardtable.scoring_service.rows import RatingRow, TableState

#: Tables held in memory before the oldest are dropped (each is a few kilobytes).
DEFAULT_MAX_TABLES = 50_000

RatingKey = tuple[str, str]


class CommittedState:
    """Tables and ratings exactly as the last commit left them (module docstring)."""

    def __init__(self, *, max_tables: int = DEFAULT_MAX_TABLES) -> None:
        self.max_tables = max_tables
        self.tables: dict[str, TableState] = {}
        self.ratings: dict[RatingKey, RatingRow] = {}
        # Whether every table and rating of the schema is held here or named in `_dropped`.
        self.complete = True
        self._dropped: set[str] = set()

    def split_tables(self, table_ids: Iterable[str]) -> tuple[dict[str, TableState], list[str]]:
        """The tables held here, and the ids that must be read from the schema."""
        held: dict[str, TableState] = {}
        to_read: list[str] = []
        for table_id in table_ids:
            state = self.tables.get(table_id)
            if state is not None:
                held[table_id] = state
            elif not self.complete or table_id in self._dropped:
                to_read.append(table_id)
        return held, to_read

    def split_ratings(
        self, keys: Iterable[RatingKey]
    ) -> tuple[dict[RatingKey, RatingRow], list[RatingKey]]:
        """The ratings held here, and the keys that must be read from the schema."""
        held: dict[RatingKey, RatingRow] = {}
        to_read: list[RatingKey] = []
        for key in keys:
            rating = self.ratings.get(key)
            if rating is not None:
                held[key] = rating
            elif not self.complete:
                to_read.append(key)
        return held, to_read

    def committed(
        self, tables: Mapping[str, TableState], ratings: Mapping[RatingKey, RatingRow]
    ) -> None:
        """Remember what a transaction just committed (the very objects it folded)."""
        for table_id, state in tables.items():
            self.tables.pop(table_id, None)  # re-inserted last: the newest are kept longest
            self.tables[table_id] = state
            self._dropped.discard(table_id)
        self.ratings.update(ratings)
        while len(self.tables) > self.max_tables:
            oldest = next(iter(self.tables))
            del self.tables[oldest]
            self._dropped.add(oldest)

    def forget(self) -> None:
        """A transaction failed after folding onto these objects: trust only the schema now."""
        self.tables.clear()
        self.ratings.clear()
        self._dropped.clear()
        self.complete = False
