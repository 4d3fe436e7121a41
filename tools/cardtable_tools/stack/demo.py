"""The demonstration ``make run`` plays: one table of each game, filled with computer players.

Everything goes through the public gRPC APIs, as another backend would use them: tables are
created on the table service with the fill option, the bot service takes the seats, progress
is read as a spectator, and the ratings are read back from the scoring service once it has
projected the games.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
from rich.console import Group
from rich.live import Live
from rich.table import Table

from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.rated import RATED_MIN_TURN_TIMER_MS
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

#: One table of each game, each with its standard options: the games are rated, so each has a
#: leaderboard to show.
DEMO_TABLES: tuple[tuple[str, int, dict[str, str]], ...] = (
    ("whist", 4, {}),
    ("358", 3, {}),
    ("belote", 4, {}),
    ("hearts", 4, {}),
)
#: The shortest timer of a rated game: computer players move at once, and one that stalls
#: holds its table up no longer than that.
DEMO_SETTINGS = events_pb2.TableSettings(
    turn_timer_ms=RATED_MIN_TURN_TIMER_MS,
    fill_with_bots=True,
    fill_wait_ms=200,
    bot_strategy="rules",
)


@dataclass
class DemoTable:
    table_id: str
    game: str
    status: str = "open"
    deal_number: int = 0
    totals: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    players: list[str] = field(default_factory=list)


@dataclass
class DemoResult:
    tables: list[DemoTable]
    leaderboards: dict[str, list[scoring_pb2.LeaderboardEntry]]
    seconds: float


def _progress_table(tables: list[DemoTable], started: float) -> Table:
    view = Table(title=f"demonstration: {time.monotonic() - started:.0f} s")
    for column in ("game", "table", "status", "deal", "totals"):
        view.add_column(column)
    for table in tables:
        view.add_row(
            table.game,
            table.table_id[:8],
            table.status,
            str(table.deal_number),
            " ".join(str(total) for total in table.totals),
        )
    return view


async def play_demo(
    table_address: str,
    scoring_address: str,
    signing_key: str,
    say: Callable[[object], None],
    live: bool = True,
    limit_seconds: float = 170.0,
) -> DemoResult:
    """Create the demo tables, show their progress until all finish, read the ratings back."""
    started = time.monotonic()
    token = TokenCodec(signing_key).issue("demo-host")
    metadata = (("authorization", f"Bearer {token}"),)
    async with (
        grpc.aio.insecure_channel(table_address) as table_channel,
        grpc.aio.insecure_channel(scoring_address) as scoring_channel,
    ):
        tables_stub = table_pb2_grpc.TableServiceStub(table_channel)
        scoring_stub = scoring_pb2_grpc.ScoringServiceStub(scoring_channel)
        tables = []
        for game, seats, options in DEMO_TABLES:
            reply = await tables_stub.CreateTable(
                table_pb2.CreateTableRequest(
                    command_id=f"demo-{secrets.token_hex(8)}",
                    game=game,
                    seats=seats,
                    options=common_pb2.GameOptions(values=options),
                    settings=DEMO_SETTINGS,
                ),
                metadata=metadata,
            )
            tables.append(DemoTable(reply.table_id, game))

        async def refresh() -> None:
            for table in tables:
                view = await tables_stub.GetTable(
                    table_pb2.GetTableRequest(table_id=table.table_id)
                )
                table.status = view.status
                table.deal_number = view.game_status.deal_number
                table.totals = list(view.game_status.totals)
                table.places = list(view.game_status.places)
                table.players = [seat.player_id for seat in view.seats]

        deadline = started + limit_seconds
        if live:
            with Live(_progress_table(tables, started), refresh_per_second=4) as display:
                while not all(table.status == "finished" for table in tables):
                    if time.monotonic() > deadline:
                        raise TimeoutError("the demonstration did not finish in time")
                    await asyncio.sleep(0.5)
                    await refresh()
                    display.update(_progress_table(tables, started))
        else:
            while not all(table.status == "finished" for table in tables):
                if time.monotonic() > deadline:
                    raise TimeoutError("the demonstration did not finish in time")
                await asyncio.sleep(0.5)
                await refresh()
            say(_progress_table(tables, started))
        leaderboards = await _leaderboards(scoring_stub, tables, deadline)
    return DemoResult(tables, leaderboards, time.monotonic() - started)


async def _leaderboards(
    scoring: scoring_pb2_grpc.ScoringServiceAsyncStub,
    tables: list[DemoTable],
    deadline: float,
) -> dict[str, list[scoring_pb2.LeaderboardEntry]]:
    """Each game's leaderboard, once the projection has rated every demo player."""
    boards: dict[str, list[scoring_pb2.LeaderboardEntry]] = {}
    for table in tables:
        while True:
            reply = await scoring.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(game=table.game, page_size=50)
            )
            rated = {entry.player_id for entry in reply.entries}
            if set(table.players) <= rated:
                boards[table.game] = list(reply.entries)
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the scoring service has not rated the {table.game} game")
            await asyncio.sleep(0.3)
    return boards


def result_tables(result: DemoResult) -> Group:
    """Final rankings and leaderboards, for people."""
    rankings = Table(title="final rankings")
    for column in ("game", "table", "seat", "player", "total", "place"):
        rankings.add_column(column)
    for table in result.tables:
        for seat, player in enumerate(table.players):
            rankings.add_row(
                table.game,
                table.table_id[:8],
                str(seat),
                player,
                str(table.totals[seat]),
                str(table.places[seat]),
            )
    boards = Table(title="rating leaderboards (from the scoring service)")
    for column in ("game", "rank", "player", "rating", "games"):
        boards.add_column(column)
    for game, entries in result.leaderboards.items():
        for entry in entries:
            boards.add_row(
                game, str(entry.rank), entry.player_id, f"{entry.rating:.1f}", str(entry.games)
            )
    return Group(rankings, boards)
