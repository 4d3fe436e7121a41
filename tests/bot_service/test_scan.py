"""The bot service's scan of running tables reads only those a computer player may sit at.

A lobby full of people's tables (a busy site, or a load test's abandoned games) must not cost
a spectator read of every table every few seconds.
"""

from __future__ import annotations

from typing import Any, cast

import grpc
from prometheus_client import CollectorRegistry

from cardtable.bot_service.claims import SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.supervisor import UNREAD_RESCAN_SECONDS, BotSupervisor
from cardtable.bot_service.table_client import TableClient
from cardtable.bots.strategy import Strategy
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2


class _Lobby:
    """A table client whose lobby lists given summaries and which counts table reads."""

    def __init__(self, summaries: list[table_pb2.TableSummary]) -> None:
        self._summaries = summaries
        self.read: list[str] = []

    async def running_tables(self) -> list[table_pb2.TableSummary]:
        return self._summaries

    async def get_table(self, table_id: str, seat: int | None = None) -> Any:
        self.read.append(table_id)
        person = events_pb2.PLAYER_KIND_PERSON
        people = [table_pb2.SeatInfo(seat=number, kind=person) for number in range(4)]
        return table_pb2.GetTableResponse(table_id=table_id, status="running", seats=people)


class _NoClaims:
    def held(self) -> list[tuple[str, int]]:
        return []


def _supervisor(lobby: _Lobby) -> BotSupervisor:
    return BotSupervisor(
        client=cast(TableClient, lobby),
        claims=cast(SeatClaims, _NoClaims()),
        strategies=lambda name: cast(Strategy, None),
        default_strategy="rules",
        metrics=BotMetrics(CollectorRegistry()),
        max_seats=10,
        max_waiting_seats=100,
        rescan_seconds=5.0,
        reclaim_grace_seconds=0.0,
    )


async def test_the_scan_skips_tables_where_only_people_sit() -> None:
    people_only = table_pb2.TableSummary(table_id="people", seats=4, bot_seats=0)
    with_a_bot = table_pb2.TableSummary(table_id="bots", seats=4, bot_seats=1)
    unknown = table_pb2.TableSummary(table_id="older-entry", seats=4)  # no count: look
    lobby = _Lobby([people_only, with_a_bot, unknown])
    assert await _supervisor(lobby).scan() == 0
    assert sorted(lobby.read) == ["bots", "older-entry"]


class _AwayLobby(_Lobby):
    """Lists a table with computer seats whose log's server is away: reading it fails."""

    async def get_table(self, table_id: str, seat: int | None = None) -> Any:
        self.read.append(table_id)
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "away"
        )


async def test_a_table_the_scan_could_not_read_is_looked_at_again_soon() -> None:
    """Its seats would otherwise wait the whole rescan interval (5 s) after the server is back."""
    bots = table_pb2.TableSummary(table_id="bots", seats=4, bot_seats=4)
    away = _supervisor(_AwayLobby([bots]))
    assert await away.scan() == 0
    assert away.next_scan_in() == UNREAD_RESCAN_SECONDS < 5.0
    fine = _supervisor(_Lobby([bots]))
    await fine.scan()
    assert fine.next_scan_in() == 5.0
