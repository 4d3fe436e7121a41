"""Which seats this replica plays: offers come in, claims go out, table players run.

Seats are offered from two sources:

* the table service's seat requests on NATS (``requests``), at once: seats filled at the
  start, and seats handed over after a leave or three timeouts;
* a scan of the running tables (``ListTables(status=running)``, then ``GetTable`` as a
  spectator of each table whose summary counts computer-held seats, or predates that count)
  at start-up and every few seconds: it finds the seats a computer player holds that no
  replica plays. That is how seats survive a restart (ours, or a replica that died: its
  claims expire), how a request lost while no replica listened is made good, and how a
  rematch's computer players (the table service sends no request for them) are picked up.
  A table of people only costs the scan its line in the list.

The table service is the truth about which seats are computer-played, so no durable queue
of requests is kept: a request is only a prompt to look at a table sooner. An offered seat is
played only once it is claimed (``claims``), so replicas never share a seat.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import grpc

from cardtable.bot_service.claims import ClaimsUnavailableError, SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.table_client import TableClient
from cardtable.bot_service.table_player import TablePlayer
from cardtable.bots.strategy import Strategy
from cardtable.platform.logging import get_logger
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2

_log = get_logger(__name__)
#: Tables read at once during a scan: enough to be quick, few enough not to flood the service.
SCAN_CONCURRENCY = 8
#: Renewals sent at once.
RENEW_CONCURRENCY = 32


class BotSupervisor:
    """Offers, claims, renewals and scans; one per process."""

    def __init__(
        self,
        *,
        client: TableClient,
        claims: SeatClaims,
        strategies: Callable[[str], Strategy],
        default_strategy: str,
        metrics: BotMetrics,
        max_seats: int,
        rescan_seconds: float,
        reclaim_grace_seconds: float,
    ) -> None:
        self._client = client
        self._claims = claims
        self._strategies = strategies
        self._default_strategy = default_strategy
        self._metrics = metrics
        self._max_seats = max_seats
        self._rescan_seconds = rescan_seconds
        self._reclaim_grace_seconds = reclaim_grace_seconds
        self._players: dict[str, TablePlayer] = {}
        self._offering: set[tuple[str, int]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._scanned = asyncio.Event()

    # -- life ---------------------------------------------------------------------------------
    async def start(self) -> None:
        """Renew claims and scan in the background; returns once the first scan is done."""
        self._tasks = [
            asyncio.create_task(self._renew_forever(), name="bot-claims-renewal"),
            asyncio.create_task(self._scan_forever(), name="bot-table-scan"),
        ]
        await self._scanned.wait()

    async def stop(self) -> None:
        """Stop playing and let go of every seat, so other replicas take them over at once."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        players = list(self._players.values())
        await asyncio.gather(*(player.stop() for player in players))
        seats = self._claims.held()
        await self._claims.release_all()
        for _ in seats:
            self._metrics.releases.labels("shutdown").inc()
        self._players.clear()
        self._update_gauges()
        _log.info("bot service stopped playing", extra={"seats_released": len(seats)})

    @property
    def seats_held(self) -> int:
        return len(self._claims.held())

    def held(self) -> list[tuple[str, int]]:
        return sorted(self._claims.held())

    # -- offers -------------------------------------------------------------------------------
    async def on_request(self, table_id: str, request: events_pb2.BotSeatRequested) -> None:
        """A seat request from the table service."""
        self._metrics.requests.labels(request.reason or "unknown").inc()
        if request.reason == "single_move":
            # The table service makes single moves after one timeout itself (a random legal
            # move, by the timer); a bot token may not act for a person's seat anyway.
            _log.info("single move request ignored", extra={"table_id": table_id})
            return
        await self.offer(table_id, request.seat)

    async def offer(self, table_id: str, seat: int) -> bool:
        """Play the seat if no replica does and this one has room; True when it is ours now."""
        key = (table_id, seat)
        if self._claims.holds(table_id, seat) or key in self._offering:
            return False
        if self.seats_held >= self._max_seats:
            self._metrics.claims.labels("full").inc()
            return False
        self._offering.add(key)
        try:
            taken = await self._claims.claim(table_id, seat)
        except ClaimsUnavailableError as error:
            self._metrics.claims.labels("error").inc()
            self._metrics.errors.labels("claims").inc()
            _log.warning(
                "could not claim a seat", extra={"table_id": table_id, "error": str(error)}
            )
            return False
        finally:
            self._offering.discard(key)
        if not taken:
            self._metrics.claims.labels("held_elsewhere").inc()
            return False
        self._metrics.claims.labels("taken").inc()
        self._player_for(table_id).add(seat)
        self._update_gauges()
        _log.info("seat taken", extra={"table_id": table_id, "seat": seat})
        return True

    def _player_for(self, table_id: str) -> TablePlayer:
        player = self._players.get(table_id)
        if player is not None and not player.closed:
            return player
        player = TablePlayer(
            table_id,
            client=self._client,
            claims=self._claims,
            strategies=self._strategies,
            default_strategy=self._default_strategy,
            metrics=self._metrics,
            release=self._released,
            reclaim_grace_seconds=self._reclaim_grace_seconds,
        )
        self._players[table_id] = player
        task = player.start()
        task.add_done_callback(lambda done: self._player_done(player, done))
        return player

    def _player_done(self, player: TablePlayer, task: asyncio.Task[None]) -> None:
        if self._players.get(player.table_id) is player:
            del self._players[player.table_id]
        if not task.cancelled() and task.exception() is not None:
            _log.error(
                "table player failed",
                extra={"table_id": player.table_id},
                exc_info=task.exception(),
            )
            # Its seats are still claimed: forget them so the next scan offers them again.
            for seat in list(player.seats):
                self._claims.forget(player.table_id, seat)
        self._update_gauges()

    async def _released(self, table_id: str, seat: int, reason: str) -> None:
        self._metrics.releases.labels(reason).inc()
        await self._claims.release(table_id, seat)
        self._update_gauges()

    def _update_gauges(self) -> None:
        self._metrics.seats_held.set(self.seats_held)
        self._metrics.tables.set(len(self._players))

    # -- renewals -----------------------------------------------------------------------------
    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self._claims.renew_every_seconds)
            await self.renew_claims()

    async def renew_claims(self) -> None:
        """Renew every claim; stop playing the seats another replica has taken over."""
        limit = asyncio.Semaphore(RENEW_CONCURRENCY)

        async def renew(table_id: str, seat: int) -> None:
            async with limit:
                try:
                    kept = await self._claims.renew(table_id, seat)
                except ClaimsUnavailableError as error:
                    self._metrics.errors.labels("claims").inc()
                    _log.warning(
                        "claim not renewed",
                        extra={"table_id": table_id, "seat": seat, "error": str(error)},
                    )
                    return
            if not kept:
                self._metrics.releases.labels("claim_lost").inc()
                _log.warning(
                    "claim lost to another replica", extra={"table_id": table_id, "seat": seat}
                )
                player = self._players.get(table_id)
                if player is not None:
                    player.drop(seat)
                self._update_gauges()

        await asyncio.gather(*(renew(table_id, seat) for table_id, seat in self._claims.held()))

    # -- scans --------------------------------------------------------------------------------
    async def _scan_forever(self) -> None:
        while True:
            try:
                await self.scan()
            except grpc.aio.AioRpcError as error:
                self._metrics.errors.labels("scan").inc()
                _log.warning("scan failed", extra={"code": error.code().name})
            finally:
                self._scanned.set()  # start-up goes on even when the table service is away
            await asyncio.sleep(self._rescan_seconds)

    async def scan(self) -> int:
        """Offer every computer-played seat of every running table; the number taken."""
        tables = await self._client.running_tables()
        limit = asyncio.Semaphore(SCAN_CONCURRENCY)
        held = self._claims.held()

        async def look(table_id: str, seats: int) -> int:
            if sum(1 for held_table, _ in held if held_table == table_id) == seats:
                return 0  # every seat is ours already
            async with limit:
                try:
                    table = await self._client.get_table(table_id)
                except grpc.aio.AioRpcError as error:
                    self._metrics.errors.labels("scan").inc()
                    _log.info(
                        "scan could not read a table",
                        extra={"table_id": table_id, "code": error.code().name},
                    )
                    return 0
            if table.status != "running":
                return 0
            taken = 0
            for info in table.seats:
                if info.kind == events_pb2.PLAYER_KIND_BOT and await self.offer(
                    table_id, info.seat
                ):
                    taken += 1
            return taken

        found = await asyncio.gather(
            *(look(table.table_id, table.seats) for table in tables if _may_have_bot_seats(table))
        )
        return sum(found)


def _may_have_bot_seats(table: table_pb2.TableSummary) -> bool:
    """Whether a computer player may hold a seat: the lobby says so, or does not say."""
    return not table.HasField("bot_seats") or table.bot_seats > 0
