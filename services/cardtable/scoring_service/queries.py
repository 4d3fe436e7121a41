"""The read side: what the gRPC API asks of the projection, as plain values.

Every query reads committed rows only, so an answer is always a consistent prefix of the log.
Pages use keyset positions (the last row shown), so rows committed between two pages neither
repeat nor vanish the way they would with offsets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from cardtable.scoring_service.rows import FINISHED
from cardtable.scoring_service.writer import read_position


@dataclass(frozen=True)
class LeaderboardEntry:
    rank: int
    player_id: str
    display_name: str
    bot: bool
    rating: float
    games: int


@dataclass(frozen=True)
class LeaderboardPosition:
    """The last entry of a page: the next starts below this rating, or after this player."""

    rating: float
    player_id: str


async def leaderboard_page(
    pool: asyncpg.Pool, game: str, page_size: int, after: LeaderboardPosition | None
) -> tuple[list[LeaderboardEntry], LeaderboardPosition | None]:
    """One page of ``game``'s leaderboard, and the position of the next (``None`` at the end)."""
    records = await pool.fetch(
        """
        SELECT rank, player_id, display_name, bot, rating, games FROM leaderboard
        WHERE game = $1
          AND ($2::float8 IS NULL OR rating < $2 OR (rating = $2 AND player_id > $3))
        ORDER BY rating DESC, player_id
        LIMIT $4
        """,
        game,
        after.rating if after else None,
        after.player_id if after else None,
        page_size + 1,
    )
    entries = [LeaderboardEntry(*record) for record in records[:page_size]]
    more = len(records) > page_size
    last = entries[-1] if more else None
    return entries, LeaderboardPosition(last.rating, last.player_id) if last else None


@dataclass(frozen=True)
class RatingChange:
    table_id: str
    seat: int
    rating_before: float
    rating_after: float
    change: float
    leaver_deduction: float
    at: datetime


@dataclass(frozen=True)
class PlayerRating:
    game: str
    rating: float
    games: int
    history: list[RatingChange]


async def player_exists(pool: asyncpg.Pool, player_id: str) -> bool:
    """Whether the player ever sat at a table."""
    return bool(await pool.fetchval("SELECT true FROM players WHERE player_id = $1", player_id))


async def player_ratings(
    pool: asyncpg.Pool, player_id: str, game: str | None, history_limit: int
) -> list[PlayerRating]:
    """The player's rating in each game (or one), with the newest changes first."""
    ratings = await pool.fetch(
        "SELECT game, rating, games FROM ratings "
        "WHERE player_id = $1 AND ($2::text IS NULL OR game = $2) ORDER BY game",
        player_id,
        game,
    )
    changes = await pool.fetch(
        """
        SELECT game, table_id, seat, rating_before, rating_after, change, leaver_deduction, at
        FROM (
            SELECT *, row_number() OVER (PARTITION BY game ORDER BY stream_sequence DESC) AS n
            FROM rating_changes WHERE player_id = $1 AND ($2::text IS NULL OR game = $2)
        ) newest
        WHERE n <= $3
        ORDER BY game, stream_sequence DESC, seat
        """,
        player_id,
        game,
        history_limit,
    )
    history: dict[str, list[RatingChange]] = {}
    for record in changes:
        history.setdefault(record["game"], []).append(
            RatingChange(
                table_id=record["table_id"],
                seat=record["seat"],
                rating_before=record["rating_before"],
                rating_after=record["rating_after"],
                change=record["change"],
                leaver_deduction=record["leaver_deduction"],
                at=record["at"],
            )
        )
    return [
        PlayerRating(
            record["game"], record["rating"], record["games"], history.get(record["game"], [])
        )
        for record in ratings
    ]


@dataclass(frozen=True)
class DealResult:
    deal_number: int
    dealer: int
    contract: str
    scores: list[int]
    totals: list[int]


@dataclass(frozen=True)
class GameResult:
    table_id: str
    game: str
    finished: bool
    player_ids: list[str]
    deals: list[DealResult]
    totals: list[int]
    places: list[int]
    rating_changes: list[float]
    disconnected: list[bool]
    started_at: datetime | None
    finished_at: datetime | None
    ended_early: bool
    end_reason: str
    rated: bool


async def game_result(pool: asyncpg.Pool, table_id: str) -> GameResult | None:
    """A game deal by deal, with its result once finished; ``None`` for an unknown table."""
    async with pool.acquire() as connection, connection.transaction(readonly=True):
        game = await connection.fetchrow(
            "SELECT game, status, started_at, finished_at, ended_early, end_reason, rated "
            "FROM games WHERE table_id = $1",
            table_id,
        )
        if game is None:
            return None
        players = await connection.fetch(
            "SELECT player_id, total, place, rating_change, left_progress IS NOT NULL AS gone "
            "FROM game_players WHERE table_id = $1 ORDER BY seat",
            table_id,
        )
        deals = await connection.fetch(
            "SELECT deal_number, dealer, contract FROM deals WHERE table_id = $1 "
            "ORDER BY deal_number",
            table_id,
        )
        seats = await connection.fetch(
            "SELECT deal_number, score, total FROM deal_seats WHERE table_id = $1 "
            "ORDER BY deal_number, seat",
            table_id,
        )
    scores: dict[int, list[int]] = {}
    totals: dict[int, list[int]] = {}
    for record in seats:
        if record["score"] is not None:
            scores.setdefault(record["deal_number"], []).append(record["score"])
            totals.setdefault(record["deal_number"], []).append(record["total"])
    finished = game["status"] == FINISHED
    rated = game["rated"]
    return GameResult(
        table_id=table_id,
        game=game["game"],
        finished=finished,
        player_ids=[record["player_id"] for record in players],
        deals=[
            DealResult(
                deal["deal_number"],
                deal["dealer"],
                deal["contract"],
                scores.get(deal["deal_number"], []),
                totals.get(deal["deal_number"], []),
            )
            for deal in deals
        ],
        totals=[record["total"] for record in players] if finished else [],
        places=[record["place"] for record in players] if finished else [],
        rating_changes=(
            [record["rating_change"] for record in players] if finished and rated else []
        ),
        disconnected=[record["gone"] for record in players],
        started_at=game["started_at"],
        finished_at=game["finished_at"],
        ended_early=game["ended_early"],
        end_reason=game["end_reason"],
        rated=rated,
    )


@dataclass(frozen=True)
class PlayerGame:
    table_id: str
    game: str
    seat: int
    finished: bool
    place: int | None
    total: int | None
    rating_change: float | None
    started_at: datetime
    finished_at: datetime | None
    started_sequence: int
    rated: bool


@dataclass(frozen=True)
class PlayerGamesPosition:
    """The last game of a page: the next page holds games started before it."""

    started_sequence: int
    seat: int


async def player_games(
    pool: asyncpg.Pool, player_id: str, page_size: int, after: PlayerGamesPosition | None
) -> tuple[list[PlayerGame], PlayerGamesPosition | None]:
    """The games a player played from the start (rated or not), most recently started first."""
    records = await pool.fetch(
        """
        SELECT games.table_id, games.game, players.seat, games.status = $5 AS finished,
               players.place, players.total, players.rating_change, games.started_at,
               games.finished_at, games.started_sequence, games.rated
        FROM game_players AS players JOIN games USING (table_id)
        WHERE players.player_id = $1
          AND ($2::bigint IS NULL OR (games.started_sequence, players.seat) < ($2, $3))
        ORDER BY games.started_sequence DESC, players.seat DESC
        LIMIT $4
        """,
        player_id,
        after.started_sequence if after else None,
        after.seat if after else None,
        page_size + 1,
        FINISHED,
    )
    found = [PlayerGame(*record) for record in records[:page_size]]
    last = found[-1] if len(records) > page_size else None
    return found, PlayerGamesPosition(last.started_sequence, last.seat) if last else None


@dataclass(frozen=True)
class ProjectionStatus:
    stream_sequence: int
    dead_letters: int


async def projection_status(pool: asyncpg.Pool, stream: str) -> ProjectionStatus:
    """How far the log has been projected, and how many messages were set aside."""
    position = await read_position(pool, stream)
    dead_letters = await pool.fetchval("SELECT count(*) FROM dead_letters")
    return ProjectionStatus(position, int(dead_letters))
