"""The ScoringService servicer: check the request, ask the projection, build the answer.

Bad requests (empty ids, unknown games, page tokens this service did not make) are
INVALID_ARGUMENT; an unknown table or player is NOT_FOUND; PostgreSQL away is UNAVAILABLE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

import asyncpg
import grpc
from asyncpg.exceptions._base import DataError as ClientDataError
from google.protobuf import timestamp_pb2

from cardtable.engine.registry import GAMES
from cardtable.platform.log_names import LogNames
from cardtable.scoring_service import queries
from cardtable.scoring_service.database import is_transient
from cardtable.scoring_service.page_tokens import (
    BadPageTokenError,
    decode_page_token,
    encode_page_token,
    token_field,
)
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc

Response = TypeVar("Response")
Context = grpc.aio.ServicerContext[Any, Any]

LEADERBOARD_PAGE = (50, 500)  # default and largest page size
GAMES_PAGE = (20, 200)
HISTORY_LIMIT = (100, 1000)


class InvalidRequestError(ValueError):
    """The request itself is wrong; the message says how."""


class NotFoundError(LookupError):
    """The request names a table or player the projection does not know."""


def _bounded(requested: int, limits: tuple[int, int]) -> int:
    """0 means the default; larger than the maximum is cut to it (AIP-158)."""
    default, largest = limits
    return default if requested == 0 else min(requested, largest)


def _game(name: str, *, required: bool) -> str | None:
    if not name:
        if required:
            raise InvalidRequestError("name a game: " + ", ".join(sorted(GAMES)))
        return None
    if name not in GAMES:
        raise InvalidRequestError(
            f"unknown game {name!r}: choose one of {', '.join(sorted(GAMES))}"
        )
    return name


def _required(value: str, what: str) -> str:
    if not value:
        raise InvalidRequestError(f"{what} is required")
    if "\x00" in value:  # PostgreSQL's text cannot hold it: no row could match
        raise InvalidRequestError(f"{what} may not contain a NUL character")
    return value


def _timestamp(moment: datetime | None) -> timestamp_pb2.Timestamp | None:
    if moment is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(moment)
    return stamp


async def answer(context: Context, work: Callable[[], Awaitable[Response]]) -> Response:
    """Run ``work`` and turn the service's errors into the matching gRPC status."""
    try:
        return await work()
    except (InvalidRequestError, BadPageTokenError) as error:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
    except NotFoundError as error:
        await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
    except (asyncpg.DataError, ClientDataError) as error:
        # Only reads run here: a value the database (class 22) or asyncpg cannot take came
        # from the request, whatever check above missed it.
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"a value cannot be used: {error}")
    except (
        asyncpg.PostgresError,
        OSError,
        asyncpg.InterfaceError,
        asyncpg.InternalClientError,
    ) as error:
        if not is_transient(error):
            raise
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the scoring database is unavailable")
    raise AssertionError("context.abort always raises")  # pragma: no cover


class ScoringServicer(scoring_pb2_grpc.ScoringServiceServicer):
    """Reads the projection in one schema; holds nothing else."""

    def __init__(self, pool: asyncpg.Pool, log: LogNames) -> None:
        self._pool = pool
        self._log = log

    async def GetLeaderboard(
        self, request: scoring_pb2.GetLeaderboardRequest, context: Context
    ) -> scoring_pb2.GetLeaderboardResponse:
        return await answer(context, lambda: self._leaderboard(request))

    async def _leaderboard(
        self, request: scoring_pb2.GetLeaderboardRequest
    ) -> scoring_pb2.GetLeaderboardResponse:
        game = _game(request.game, required=True)
        assert game is not None
        after = None
        if request.page_token:
            position = decode_page_token(request.page_token, "leaderboard")
            if token_field(position, "game", str) != game:
                raise BadPageTokenError("the page token is for another game's leaderboard")
            after = queries.LeaderboardPosition(
                token_field(position, "rating", float), token_field(position, "player", str)
            )
        entries, following = await queries.leaderboard_page(
            self._pool, game, _bounded(request.page_size, LEADERBOARD_PAGE), after
        )
        return scoring_pb2.GetLeaderboardResponse(
            entries=[
                scoring_pb2.LeaderboardEntry(
                    rank=entry.rank,
                    player_id=entry.player_id,
                    rating=entry.rating,
                    games=entry.games,
                    display_name=entry.display_name,
                    bot=entry.bot,
                )
                for entry in entries
            ],
            next_page_token=encode_page_token(
                "leaderboard", game=game, rating=following.rating, player=following.player_id
            )
            if following
            else "",
        )

    async def GetPlayerRatings(
        self, request: scoring_pb2.GetPlayerRatingsRequest, context: Context
    ) -> scoring_pb2.GetPlayerRatingsResponse:
        return await answer(context, lambda: self._player_ratings(request))

    async def _player_ratings(
        self, request: scoring_pb2.GetPlayerRatingsRequest
    ) -> scoring_pb2.GetPlayerRatingsResponse:
        player_id = _required(request.player_id, "player_id")
        game = _game(request.game, required=False)
        if not await queries.player_exists(self._pool, player_id):
            raise NotFoundError(f"no player {player_id!r} has sat at a table")
        ratings = await queries.player_ratings(
            self._pool, player_id, game, _bounded(request.history_limit, HISTORY_LIMIT)
        )
        return scoring_pb2.GetPlayerRatingsResponse(
            ratings=[
                scoring_pb2.PlayerRating(
                    game=rating.game,
                    rating=rating.rating,
                    games=rating.games,
                    history=[
                        scoring_pb2.RatingChange(
                            table_id=change.table_id,
                            before=change.rating_before,
                            after=change.rating_after,
                            change=change.change,
                            at=_timestamp(change.at),
                            seat=change.seat,
                            leaver_deduction=change.leaver_deduction,
                        )
                        for change in rating.history
                    ],
                )
                for rating in ratings
            ]
        )

    async def GetGameResult(
        self, request: scoring_pb2.GetGameResultRequest, context: Context
    ) -> scoring_pb2.GetGameResultResponse:
        return await answer(context, lambda: self._game_result(request))

    async def _game_result(
        self, request: scoring_pb2.GetGameResultRequest
    ) -> scoring_pb2.GetGameResultResponse:
        table_id = _required(request.table_id, "table_id")
        result = await queries.game_result(self._pool, table_id)
        if result is None:
            raise NotFoundError(f"no table {table_id!r}")
        return scoring_pb2.GetGameResultResponse(
            table_id=result.table_id,
            game=result.game,
            player_ids=result.player_ids,
            deals=[
                scoring_pb2.DealResult(
                    deal_number=deal.deal_number,
                    dealer=deal.dealer,
                    contract=deal.contract,
                    scores=deal.scores,
                    totals=deal.totals,
                )
                for deal in result.deals
            ],
            totals=result.totals,
            places=result.places,
            rating_changes=result.rating_changes,
            finished=result.finished,
            started_at=_timestamp(result.started_at),
            finished_at=_timestamp(result.finished_at),
            ended_early=result.ended_early,
            end_reason=result.end_reason,
            disconnected=result.disconnected,
            rated=result.rated,
        )

    async def ListPlayerGames(
        self, request: scoring_pb2.ListPlayerGamesRequest, context: Context
    ) -> scoring_pb2.ListPlayerGamesResponse:
        return await answer(context, lambda: self._player_games(request))

    async def _player_games(
        self, request: scoring_pb2.ListPlayerGamesRequest
    ) -> scoring_pb2.ListPlayerGamesResponse:
        player_id = _required(request.player_id, "player_id")
        after = None
        if request.page_token:
            position = decode_page_token(request.page_token, "games")
            if token_field(position, "player", str) != player_id:
                raise BadPageTokenError("the page token is for another player's games")
            after = queries.PlayerGamesPosition(
                token_field(position, "sequence", int), token_field(position, "seat", int)
            )
        if not await queries.player_exists(self._pool, player_id):
            raise NotFoundError(f"no player {player_id!r} has sat at a table")
        games, following = await queries.player_games(
            self._pool, player_id, _bounded(request.page_size, GAMES_PAGE), after
        )
        return scoring_pb2.ListPlayerGamesResponse(
            games=[
                scoring_pb2.GameSummary(
                    table_id=game.table_id,
                    game=game.game,
                    seat=game.seat,
                    place=game.place or 0,
                    total=game.total or 0,
                    rating_change=game.rating_change or 0.0,
                    finished_at=_timestamp(game.finished_at),
                    finished=game.finished,
                    started_at=_timestamp(game.started_at),
                    rated=game.rated,
                )
                for game in games
            ],
            next_page_token=encode_page_token(
                "games",
                player=player_id,
                sequence=following.started_sequence,
                seat=following.seat,
            )
            if following
            else "",
        )

    async def GetProjectionStatus(
        self, request: scoring_pb2.GetProjectionStatusRequest, context: Context
    ) -> scoring_pb2.GetProjectionStatusResponse:
        return await answer(context, self._projection_status)

    async def _projection_status(self) -> scoring_pb2.GetProjectionStatusResponse:
        status = await queries.projection_status(self._pool, self._log.stream)
        return scoring_pb2.GetProjectionStatusResponse(
            stream_sequence=status.stream_sequence, dead_letters=status.dead_letters
        )
