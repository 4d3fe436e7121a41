"""The bot service's scan of running tables reads only those a computer player may sit at.

A lobby full of people's tables (a busy site, or a load test's abandoned games) must not cost
a spectator read of every table every few seconds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import grpc
from prometheus_client import CollectorRegistry

from cardtable.bot_service.claims import ClaimsUnavailableError, SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.supervisor import (
    RENEW_LOOK_SECONDS,
    UNREAD_RESCAN_SECONDS,
    BotSupervisor,
)
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


def _supervisor(lobby: _Lobby, claims: object | None = None) -> BotSupervisor:
    return BotSupervisor(
        client=cast(TableClient, lobby),
        claims=cast(SeatClaims, claims if claims is not None else _NoClaims()),
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


class _ClaimsAway:
    """Claims whose bucket has no leader for now: every claim and renewal fails."""

    renew_every_seconds = 5.0

    def __init__(self, due: list[tuple[str, int]] | None = None) -> None:
        self._due = due or []
        self.renewals: list[float] = []

    def held(self) -> list[tuple[str, int]]:
        return list(self._due)

    def holds(self, table_id: str, seat: int) -> bool:
        return False

    def due(self) -> list[tuple[str, int]]:
        return list(self._due)

    async def claim(self, table_id: str, seat: int) -> bool:
        raise ClaimsUnavailableError("no responders")

    async def renew(self, table_id: str, seat: int) -> bool:
        self.renewals.append(time.monotonic())
        raise ClaimsUnavailableError("timeout")

    async def release_all(self) -> None:
        return None


class _CountedLobby(_Lobby):
    def __init__(self) -> None:
        super().__init__([])
        self.listed_at: list[float] = []

    async def running_tables(self) -> list[table_pb2.TableSummary]:
        self.listed_at.append(time.monotonic())
        return []


async def test_a_seat_request_whose_claim_failed_brings_the_next_scan_forward() -> None:
    """A new table's seats would otherwise wait out the whole rescan interval (5 s) after the
    claims bucket has a leader again."""
    lobby = _CountedLobby()
    supervisor = _supervisor(lobby, _ClaimsAway())
    await supervisor.start()
    try:
        await asyncio.sleep(0.2)
        assert len(lobby.listed_at) == 1  # the first scan; the next is 5 s away
        failed_at = time.monotonic()
        assert not await supervisor.offer("table", 0, "creator")  # as a seat request does
        await asyncio.sleep(UNREAD_RESCAN_SECONDS + 0.5)
        assert len(lobby.listed_at) == 2
        assert lobby.listed_at[1] - failed_at <= UNREAD_RESCAN_SECONDS + 0.2
    finally:
        await supervisor.stop()


async def test_a_renewal_that_failed_is_tried_again_soon_not_a_renewal_interval_later() -> None:
    """The claim's lease (three quarters of its TTL) must not run out while the bucket's new
    leader is elected: the retry comes at the next look, a second later, not 5 s later."""
    claims = _ClaimsAway(due=[("table", 1)])
    supervisor = _supervisor(_CountedLobby(), claims)
    began = time.monotonic()
    await supervisor.start()
    try:
        await asyncio.sleep(2 * RENEW_LOOK_SECONDS + 0.5)
    finally:
        await supervisor.stop()
    assert len(claims.renewals) >= 2
    assert claims.renewals[1] - began < claims.renew_every_seconds
