"""The projection's committed rows kept in memory, so a writer need not read them back.

Keeping the tables being played and the ratings in memory between transactions saves
reading them back before every run of messages: five queries per transaction for the live
consumer, which commits many small runs a second. What a writer committed is what the schema
holds as long as nobody else wrote it since, and the writer can tell: every transaction
locks the schema's position row first, and the position moves with every commit. A position
other than the one this writer last committed (:meth:`check_position`) means another writer
(a second consumer by mistake, a rebuild in place) was there, and everything held is forgotten.

A rebuild is the only writer of the schema it builds from nothing, so a table or rating
missing here is missing from the schema too (``complete``), and no query is needed to learn
it. The live consumer starts on a schema with history: it holds what it committed and reads
the rest (``complete=False``).

What else breaks the promise falls back to reading PostgreSQL, never to a guess:

- a transaction that fails has already folded some batches onto these objects, so every
  failure forgets everything (:meth:`forget`) and the writer reads the schema again;
- past ``max_tables`` (and ``max_ratings``) the oldest are dropped from memory; while
  complete, the dropped tables' ids are remembered, so only those few are read back if they
  ever get another batch (a rematch, a late leave).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cardtable.scoring_service.rows import RatingRow, TableState

#: Tables held in memory before the oldest are dropped (each is a few kilobytes).
DEFAULT_MAX_TABLES = 50_000
#: What the live consumer holds: well over the tables in play between two games of each, and
#: the players who play them; every held object is one more for the garbage collector to walk.
LIVE_MAX_TABLES = 4_096
LIVE_MAX_RATINGS = 16_384

RatingKey = tuple[str, str]


class CommittedState:
    """Tables and ratings exactly as the last commit left them (module docstring)."""

    def __init__(
        self,
        *,
        max_tables: int = DEFAULT_MAX_TABLES,
        max_ratings: int | None = None,
        complete: bool = True,
    ) -> None:
        """``complete``: the schema is empty (a rebuild's), so what is not held does not exist.

        ``max_ratings``: None keeps every rating, which a complete state must.
        """
        if complete and max_ratings is not None:
            raise ValueError("a complete state keeps every rating: max_ratings must be None")
        self.max_tables = max_tables
        self.max_ratings = max_ratings
        self.tables: dict[str, TableState] = {}
        self.ratings: dict[RatingKey, RatingRow] = {}
        # Whether every table and rating of the schema is held here or named in `_dropped`.
        self.complete = complete
        self._dropped: set[str] = set()
        #: The schema's position after this writer's last commit; None: nothing held yet.
        self.position: int | None = None

    @classmethod
    def for_live_consumer(cls) -> CommittedState:
        """Bounded, and reading from the schema whatever it does not hold."""
        return cls(max_tables=LIVE_MAX_TABLES, max_ratings=LIVE_MAX_RATINGS, complete=False)

    def check_position(self, position: int) -> None:
        """Forget everything unless ``position`` (read under the position row's lock) is the
        one this writer last committed: otherwise someone else wrote the schema meanwhile."""
        if self.position is not None and position != self.position:
            self.forget()
        self.position = position

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
        self,
        tables: Mapping[str, TableState],
        ratings: Mapping[RatingKey, RatingRow],
        position: int | None = None,
    ) -> None:
        """Remember what a transaction just committed (the very objects it folded), and the
        position it left the schema at."""
        for table_id, state in tables.items():
            self.tables.pop(table_id, None)  # re-inserted last: the newest are kept longest
            self.tables[table_id] = state
            self._dropped.discard(table_id)
        for key, rating in ratings.items():
            self.ratings.pop(key, None)
            self.ratings[key] = rating
        while len(self.tables) > self.max_tables:
            oldest = next(iter(self.tables))
            del self.tables[oldest]
            if self.complete:
                self._dropped.add(oldest)
        if self.max_ratings is not None and not self.complete:
            while len(self.ratings) > self.max_ratings:
                del self.ratings[next(iter(self.ratings))]
        if position is not None:
            self.position = position

    def forget(self) -> None:
        """A transaction failed after folding onto these objects: trust only the schema now."""
        self.tables.clear()
        self.ratings.clear()
        self._dropped.clear()
        self.complete = False
        self.position = None
