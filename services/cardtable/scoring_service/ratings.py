"""Which of docs/rules.md's rating rules applies to a finished game, and to whom.

The formulas themselves live in :mod:`cardtable.engine.rating` and only there; this module
decides what to feed them from the log:

* an unrated game (its table's settings lay outside the rated bounds: ``TableCreated.rated``)
  gets none: its result is kept, and no rating, history or leaderboard changes;
* the player rated for a seat is whoever sat there when the game started, bots included; a
  bot that took over a leaver's seat is not rated for it;
* a player counted as disconnected at the end (left or lost the seat to timeouts, and did not
  reclaim it) loses the leaver deduction, scaled by the share of the game completed then;
* a Whist game that ended because everyone else left (``GameFinished.end_reason``
  ``REASON_EVERYONE_ELSE_LEFT``, kept in the rows as its text ``everyone_else_left``) uses
  that rule instead of the place formula: the remaining person gets +5n, each player who left
  -15, bots seated from the start nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cardtable.engine import rating
from cardtable.scoring_service.messages import PoisonMessageError
from cardtable.scoring_service.rows import PERSON

EVERYONE_ELSE_LEFT = "everyone_else_left"
WHIST = "whist"


@dataclass(frozen=True)
class RatedSeat:
    """The player rated for one seat and, if they are counted as disconnected, when they left."""

    player_id: str
    kind: str
    left_progress: float | None


@dataclass(frozen=True)
class FinishedGame:
    """A game's end as the log recorded it, with what the rating rules need to know."""

    table_id: str
    game: str
    sequence: int
    at: datetime
    totals: tuple[int, ...]
    seats: tuple[RatedSeat, ...]
    ended_early: bool
    end_reason: str
    #: Whether the game moves ratings (an unrated game's changes are never computed).
    rated: bool


@dataclass(frozen=True)
class SeatChange:
    """One seat's rating change, and the part of it that is the leaver deduction."""

    change: float
    leaver_deduction: float


def seat_changes(finished: FinishedGame, ratings_before: Sequence[float]) -> list[SeatChange]:
    """Each seat's change, given the seats' ratings before the game (docs/rules.md)."""
    players = len(finished.seats)
    if finished.ended_early or finished.end_reason:
        return _early_end_changes(finished)
    left_at = {
        seat: rated.left_progress
        for seat, rated in enumerate(finished.seats)
        if rated.left_progress is not None
    }
    try:
        changes = rating.rating_changes(finished.game, finished.totals, ratings_before, left_at)
    except ValueError as error:
        raise PoisonMessageError(f"no rating for this game's end: {error}") from None
    return [
        SeatChange(
            change,
            rating.leaver_deduction(players, left_at[seat]) if seat in left_at else 0.0,
        )
        for seat, change in enumerate(changes)
    ]


def _early_end_changes(finished: FinishedGame) -> list[SeatChange]:
    """docs/rules.md, Whist: "if every other person at the table has left"."""
    if finished.end_reason != EVERYONE_ELSE_LEFT or finished.game != WHIST:
        raise PoisonMessageError(
            f"{finished.game} game ended early ({finished.end_reason or 'no reason'}): "
            "no rating rule covers it"
        )
    leavers = [seat for seat, rated in enumerate(finished.seats) if rated.left_progress is not None]
    remaining = [
        seat
        for seat, rated in enumerate(finished.seats)
        if rated.kind == PERSON and rated.left_progress is None
    ]
    if len(remaining) != 1:
        raise PoisonMessageError(
            f"'{EVERYONE_ELSE_LEFT}' needs exactly one person still seated, found {len(remaining)}"
        )
    changes = rating.whist_everyone_left_changes(len(finished.seats), remaining[0], leavers)
    return [SeatChange(change, 0.0) for change in changes]
