"""The projection's rows as Python values, one dataclass per table.

Field names and order are the table's columns (see migrations/0001_projection.sql), so the writer
can load and store any row type the same way. A table being played is held as a
:class:`TableState` while a transaction folds its batches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from operator import attrgetter
from typing import Any, ClassVar

PERSON = "person"
BOT = "bot"

OPEN = "open"
RUNNING = "running"
FINISHED = "finished"


class Row:
    """What every row type declares: its table and primary key columns."""

    TABLE: ClassVar[str]
    KEY: ClassVar[tuple[str, ...]]

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The table's columns, in field order."""
        columns = _COLUMNS.get(cls)
        if columns is None:
            declared = fields(cls)  # type: ignore[arg-type]  # every subclass is a dataclass
            columns = _COLUMNS[cls] = tuple(column.name for column in declared)
        return columns

    def values(self) -> tuple[Any, ...]:
        """This row's values, in column order."""
        getter = _VALUES.get(type(self))
        if getter is None:
            getter = _VALUES[type(self)] = _tuple_getter(self.columns())
        return getter(self)

    def key(self) -> tuple[Any, ...]:
        """This row's primary key (read for every row a batch touches, hence the getter)."""
        getter = _KEYS.get(type(self))
        if getter is None:
            getter = _KEYS[type(self)] = _tuple_getter(self.KEY)
        return getter(self)


def _tuple_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A C-level reader of ``names`` that always gives a tuple (attrgetter of one does not)."""
    if len(names) == 1:
        read_one = attrgetter(names[0])
        return lambda row: (read_one(row),)
    return attrgetter(*names)


_COLUMNS: dict[type[Row], tuple[str, ...]] = {}
_VALUES: dict[type[Row], Callable[[Any], tuple[Any, ...]]] = {}
_KEYS: dict[type[Row], Callable[[Any], tuple[Any, ...]]] = {}


@dataclass(slots=True)
class GameRow(Row):
    TABLE = "games"
    KEY = ("table_id",)

    table_id: str
    game: str
    seats: int
    options: str  # JSON text of a jsonb column
    settings: str
    created_by: str
    rematch_of: str
    rematch_table_id: str
    status: str
    game_number: int
    first_dealer: int | None
    deal_number: int
    ended_early: bool
    end_reason: str
    table_version: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    started_sequence: int | None
    finished_sequence: int | None
    #: The digest of the last batch projected and whether one was signed (log_signing).
    last_batch_sha256: bytes = b""
    signed: bool = False
    #: Whether the game moves ratings (TableCreated, platform/rated_tables.py).
    rated: bool = True


@dataclass(slots=True)
class SeatRow(Row):
    TABLE = "seats"
    KEY = ("table_id", "seat")

    table_id: str
    seat: int
    player_id: str | None
    kind: str | None


@dataclass(slots=True)
class GamePlayerRow(Row):
    TABLE = "game_players"
    KEY = ("table_id", "seat")

    table_id: str
    seat: int
    player_id: str
    kind: str
    left_progress: float | None = None
    total: int | None = None
    place: int | None = None
    rating_change: float | None = None


@dataclass(slots=True)
class DealRow(Row):
    TABLE = "deals"
    KEY = ("table_id", "deal_number")

    table_id: str
    deal_number: int
    dealer: int
    cards_each: int
    trump: str | None
    declarer: int | None
    chosen_contract: str | None
    passing: str | None
    thrown_in: bool
    contract: str
    started_at: datetime
    scored_at: datetime | None


@dataclass(slots=True)
class DealSeatRow(Row):
    TABLE = "deal_seats"
    KEY = ("table_id", "deal_number", "seat")

    table_id: str
    deal_number: int
    seat: int
    bid: int | None = None
    score: int | None = None
    total: int | None = None


@dataclass(slots=True)
class PlayerRow(Row):
    TABLE = "players"
    KEY = ("player_id",)

    player_id: str
    kind: str
    display_name: str
    first_seen_at: datetime


@dataclass(slots=True)
class RatingRow(Row):
    TABLE = "ratings"
    KEY = ("player_id", "game")

    player_id: str
    game: str
    rating: float
    games: int
    updated_at: datetime


@dataclass(slots=True)
class RatingChangeRow(Row):
    TABLE = "rating_changes"
    KEY = ("table_id", "seat")

    table_id: str
    seat: int
    player_id: str
    game: str
    rating_before: float
    rating_after: float
    change: float
    leaver_deduction: float
    at: datetime
    stream_sequence: int


@dataclass(slots=True)
class DeadLetterRow(Row):
    TABLE = "dead_letters"
    KEY = ("stream_sequence",)

    stream_sequence: int
    subject: str
    reason: str
    data: bytes
    stored_at: datetime


@dataclass
class TableState:
    """Everything about one table that its next batches may change."""

    game: GameRow
    seats: dict[int, SeatRow]
    # The player of record for each seat (rated for it in a rated game), from the start on.
    rated: dict[int, GamePlayerRow] = field(default_factory=dict)
    # The deal being played (or the last one), and its per-seat rows.
    deal: DealRow | None = None
    deal_seats: dict[int, DealSeatRow] = field(default_factory=dict)
