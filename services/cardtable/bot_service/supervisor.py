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

A replica plays ``max_seats`` seats at most. A seat offered while it is full waits in memory
(``seat_queue``: shared fairly between the tables' creators, longest-waiting table first) and
is taken when one of the replica's seats frees up: a game ends, a person takes a seat back, a
claim is lost. Before a waiting seat is claimed its table is read again, so a seat whose game
ended, that a person took back or that another replica took meanwhile leaves the queue. The
shortage shows in ``bot_seats_waiting`` and in a warning (``shortage``); meanwhile the table
service moves for a seat nobody plays after its deadline, so no game stalls.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable

import grpc

from cardtable.bot_service.claims import ClaimsUnavailableError, SeatClaims, SeatKey
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.seat_queue import SeatQueue, WaitingSeat
from cardtable.bot_service.shortage import ShortageLine, ShortageLog
from cardtable.bot_service.table_client import TableClient
from cardtable.bot_service.table_player import TablePlayer
from cardtable.bots.strategy import Strategy
from cardtable.platform.event_upcasting import REQUEST_TEXTS, request_reason
from cardtable.platform.logging import get_logger
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2

_log = get_logger(__name__)
#: Tables read at once during a scan: enough to be quick, few enough not to flood the service.
SCAN_CONCURRENCY = 8
#: After a scan that could not read a table or claim a seat (NATS or the table service away a
#: moment), or a seat request whose claim failed, the next scan comes this soon instead of
#: after the usual rescan interval.
UNREAD_RESCAN_SECONDS = 1.0
#: How often the claims due for renewal are renewed: a renewal that failed (its bucket's
#: leader away) is tried again this soon, long before the claim's lease runs out.
RENEW_LOOK_SECONDS = 1.0
#: Renewals sent at once.
RENEW_CONCURRENCY = 32
RUNNING = "running"
#: How an offered seat's claim ends, and how a waiting seat leaves the queue.
TAKEN, HELD_ELSEWHERE, ERROR, GONE, DROPPED = "taken", "held_elsewhere", "error", "gone", "dropped"


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
        max_waiting_seats: int,
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
        #: Who created each table this replica plays (its seats count against that share).
        self._creators: dict[str, str] = {}
        #: Seats being claimed now, and their tables' creators: they count as held.
        self._offering: dict[SeatKey, str] = {}
        self._queue = SeatQueue(max_seats=max_seats, limit=max_waiting_seats)
        self._shortage = ShortageLog()
        self._look_at_queue = asyncio.Event()
        #: When the previous scan asked for the running tables (see ``_forget_ended_tables``).
        self._previous_listing_at: float | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._scanned = asyncio.Event()
        #: Tables the scan could not read and seats whose claim failed since it began: those
        #: seats wait for the next scan, which comes sooner.
        self._missed = 0
        self._missed_now = asyncio.Event()
        metrics.max_seats.set(max_seats)

    # -- life ---------------------------------------------------------------------------------
    async def start(self) -> None:
        """Renew claims and scan in the background; returns once the first scan is done."""
        self._tasks = [
            asyncio.create_task(self._renew_forever(), name="bot-claims-renewal"),
            asyncio.create_task(self._scan_forever(), name="bot-table-scan"),
            asyncio.create_task(self._take_waiting_forever(), name="bot-seat-queue"),
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
        waiting = self._queue.seats()
        for seat in waiting:  # the other replicas' scans find them
            self._queue.discard(seat.table_id, seat.seat)
        self._update_gauges()
        self._metrics.seats_waiting.set(0)
        _log.info(
            "bot service stopped playing",
            extra={"seats_released": len(seats), "seats_waiting": len(waiting)},
        )

    @property
    def seats_held(self) -> int:
        return len(self._claims.held())

    def held(self) -> list[tuple[str, int]]:
        return sorted(self._claims.held())

    def waiting(self) -> list[WaitingSeat]:
        """The seats waiting for room, in queue order."""
        return self._queue.seats()

    # -- offers -------------------------------------------------------------------------------
    async def on_request(self, table_id: str, request: events_pb2.BotSeatRequested) -> None:
        """A seat request from the table service."""
        reason = request_reason(request)  # an older table service wrote it as text only
        self._metrics.requests.labels(REQUEST_TEXTS.get(reason, "unknown")).inc()
        if reason == events_pb2.BotSeatRequested.REASON_SINGLE_MOVE:
            # The table service makes single moves after one timeout itself (a random legal
            # move, by the timer); a bot token may not act for a person's seat anyway.
            _log.info("single move request ignored", extra={"table_id": table_id})
            return
        await self.offer(table_id, request.seat, request.created_by)

    async def offer(self, table_id: str, seat: int, creator: str) -> bool:
        """Play the seat if no replica does: at once when there is room and no seat waits,
        else once its turn in the queue comes. True when it is ours now."""
        key = (table_id, seat)
        if self._claims.holds(table_id, seat) or key in self._offering or key in self._queue:
            return False
        if self._queue or self._room() <= 0:
            self._wait_for_room(table_id, seat, creator)
            return False
        self._offering[key] = creator
        try:
            outcome = await self._claim(table_id, seat, creator)
        finally:
            del self._offering[key]
        if outcome == ERROR:
            self._look_at_queue.set()  # the room it kept is free again
        return outcome == TAKEN

    def _room(self) -> int:
        return self._max_seats - self.seats_held - len(self._offering)

    def _holding(self) -> Counter[str]:
        """Seats held (or being claimed) per creator."""
        holding = Counter(self._creators.get(table_id, "") for table_id, _ in self._claims.held())
        holding.update(self._offering.values())
        return holding

    async def _claim(self, table_id: str, seat: int, creator: str) -> str:
        """Claim the seat (the caller keeps room for it) and play it if it is ours."""
        try:
            taken = await self._claims.claim(table_id, seat)
        except ClaimsUnavailableError as error:
            self._metrics.claims.labels(ERROR).inc()
            self._metrics.errors.labels("claims").inc()
            _log.warning(
                "could not claim a seat", extra={"table_id": table_id, "error": str(error)}
            )
            self._scan_soon()
            return ERROR
        if not taken:
            self._metrics.claims.labels(HELD_ELSEWHERE).inc()
            return HELD_ELSEWHERE
        self._metrics.claims.labels(TAKEN).inc()
        self._creators[table_id] = creator
        self._player_for(table_id).add(seat)
        self._update_gauges()
        _log.info("seat taken", extra={"table_id": table_id, "seat": seat})
        return TAKEN

    # -- the queue ----------------------------------------------------------------------------
    def _wait_for_room(self, table_id: str, seat: int, creator: str) -> None:
        now = time.monotonic()
        self._metrics.claims.labels("full").inc()
        dropped = self._queue.add(table_id, seat, creator, now)
        if dropped is not None:
            self._dropped(dropped, now)
        self._look_at_queue.set()

    async def _take_waiting_forever(self) -> None:
        while True:
            await self._look_at_queue.wait()
            self._look_at_queue.clear()
            await self.take_waiting()

    async def take_waiting(self) -> int:
        """Give the free room to waiting seats, in the queue's order; the number taken.

        One seat at a time, each after its table is read again: a seat freed stays free for
        the queue's next seat, not for whichever offer comes first.
        """
        taken = 0
        while self._queue and self._room() > 0:
            waiting = self._queue.next_seat(self._holding())
            if waiting is None:
                break
            key = (waiting.table_id, waiting.seat)
            self._offering[key] = waiting.creator
            try:
                outcome = await self._take(waiting)
            finally:
                del self._offering[key]
            if outcome == ERROR:
                # The table service or NATS did not answer: keep its place; the next scan or
                # freed seat tries again.
                dropped = self._queue.put_back(waiting)
                if dropped is not None:
                    self._dropped(dropped, time.monotonic())
                break
            self._left_queue(waiting, outcome)
            if outcome == TAKEN:
                taken += 1
        self._report_queue()
        return taken

    async def _take(self, waiting: WaitingSeat) -> str:
        """Claim a seat that waited, if its table still needs a computer player for it."""
        try:
            table = await self._client.get_table(waiting.table_id)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return GONE
            self._metrics.errors.labels(error.code().name).inc()
            _log.info(
                "could not read a waiting seat's table",
                extra={"table_id": waiting.table_id, "code": error.code().name},
            )
            return ERROR
        if table.status != RUNNING:
            for seat in self._queue.discard_table(waiting.table_id):
                self._left_queue(seat, GONE)
            return GONE
        if waiting.seat >= len(table.seats) or (
            table.seats[waiting.seat].kind != events_pb2.PLAYER_KIND_BOT
        ):
            return GONE
        return await self._claim(waiting.table_id, waiting.seat, waiting.creator)

    def _left_queue(self, seat: WaitingSeat, outcome: str) -> None:
        self._metrics.seat_wait_seconds.labels(outcome).observe(time.monotonic() - seat.since)

    def _dropped(self, seat: WaitingSeat, now: float) -> None:
        self._metrics.seat_wait_seconds.labels(DROPPED).observe(now - seat.since)
        told = self._shortage.dropped(now)
        if told:
            _log.warning(
                "too many seats wait for a computer player: the newest waiting seat of the "
                "creator with the most waiting was dropped; the next scan offers it again",
                extra={
                    "seats_dropped": told,
                    "max_waiting_seats": self._queue.limit,
                    "table_id": seat.table_id,
                    "created_by": seat.creator,
                },
            )

    def _report_queue(self) -> None:
        """Update the gauge, and say in the log when a shortage starts, lasts or ends."""
        waiting = len(self._queue)
        self._metrics.seats_waiting.set(waiting)
        now = time.monotonic()
        since = self._shortage.since
        line = self._shortage.note(waiting, now)
        if line is None:
            return
        if line is ShortageLine.ENDED:
            _log.info(
                "no seat waits for a computer player any more",
                extra={"shortage_seconds": round(now - (since or now), 1)},
            )
            return
        oldest = self._queue.oldest_since()
        _log.warning(
            "the bot service is full and seats wait for a computer player: add bot replicas or "
            "raise BOT_MAX_SEATS (the table service moves for a seat nobody plays in time)"
            if line is ShortageLine.STARTED
            else "the bot service is still full and seats wait for a computer player",
            extra={
                "seats_waiting": waiting,
                "seats_held": self.seats_held,
                "max_seats": self._max_seats,
                "creators_waiting": self._queue.creators_waiting(),
                "longest_wait_seconds": round(now - (oldest if oldest is not None else now), 1),
            },
        )

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
            if not any(table_id == player.table_id for table_id, _ in self._claims.held()):
                self._creators.pop(player.table_id, None)
        if not task.cancelled() and task.exception() is not None:
            _log.error(
                "table player failed",
                extra={"table_id": player.table_id},
                exc_info=task.exception(),
            )
            # Its seats are still claimed: forget them so the next scan offers them again.
            for seat in list(player.seats):
                self._claims.forget(player.table_id, seat)
            self._look_at_queue.set()
        self._update_gauges()

    async def _released(self, table_id: str, seat: int, reason: str) -> None:
        self._metrics.releases.labels(reason).inc()
        await self._claims.release(table_id, seat)
        self._update_gauges()
        self._look_at_queue.set()

    def _update_gauges(self) -> None:
        self._metrics.seats_held.set(self.seats_held)
        self._metrics.tables.set(len(self._players))

    # -- renewals -----------------------------------------------------------------------------
    async def _renew_forever(self) -> None:
        # Half the renewal interval at most, so a claim is renewed well inside its lease.
        look_every = min(RENEW_LOOK_SECONDS, self._claims.renew_every_seconds / 2)
        while True:
            await asyncio.sleep(look_every)
            await self.renew_claims(self._claims.due())

    async def renew_claims(self, seats: list[SeatKey] | None = None) -> None:
        """Renew ``seats`` (every claim by default); stop playing the seats another replica has
        taken over."""
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
                self._look_at_queue.set()

        chosen = self._claims.held() if seats is None else seats
        await asyncio.gather(*(renew(table_id, seat) for table_id, seat in chosen))

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
            await self._until_next_scan()

    def next_scan_in(self) -> float:
        """Seconds from one scan to the next: fewer when a table or a claim was missed since
        the last one began."""
        if self._missed:
            return min(self._rescan_seconds, UNREAD_RESCAN_SECONDS)
        return self._rescan_seconds

    async def _until_next_scan(self) -> None:
        """Wait for the next scan, cutting the wait short when a claim fails meanwhile."""
        began = time.monotonic()
        while (left := self.next_scan_in() - (time.monotonic() - began)) > 0:
            self._missed_now.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._missed_now.wait(), left)

    def _scan_soon(self) -> None:
        self._missed += 1
        self._missed_now.set()

    async def scan(self) -> int:
        """Offer every computer-played seat of every running table; the number taken now."""
        listing_at = time.monotonic()
        self._missed = 0
        tables = await self._client.running_tables()
        self._forget_ended_tables({table.table_id for table in tables}, listing_at)
        limit = asyncio.Semaphore(SCAN_CONCURRENCY)
        held = Counter(table_id for table_id, _ in self._claims.held())

        async def look(summary: table_pb2.TableSummary) -> int:
            table_id = summary.table_id
            known = held[table_id] + self._queue.waiting_at(table_id)
            if known >= (summary.bot_seats if summary.HasField("bot_seats") else summary.seats):
                return 0  # every computer-held seat is ours already, or waits here
            async with limit:
                try:
                    table = await self._client.get_table(table_id)
                except grpc.aio.AioRpcError as error:
                    self._metrics.errors.labels("scan").inc()
                    self._scan_soon()
                    _log.info(
                        "scan could not read a table",
                        extra={"table_id": table_id, "code": error.code().name},
                    )
                    return 0
            if table.status != RUNNING:
                for seat in self._queue.discard_table(table_id):
                    self._left_queue(seat, GONE)
                return 0
            taken = 0
            for info in table.seats:
                if info.kind != events_pb2.PLAYER_KIND_BOT:
                    reclaimed = self._queue.discard(table_id, info.seat)
                    if reclaimed is not None:  # a person took it back
                        self._left_queue(reclaimed, GONE)
                elif await self.offer(table_id, info.seat, table.created_by):
                    taken += 1
            return taken

        found = await asyncio.gather(
            *(look(table) for table in tables if _may_have_bot_seats(table))
        )
        self._look_at_queue.set()  # also retries a waiting seat that failed for a moment
        return sum(found)

    def _forget_ended_tables(self, running: set[str], listing_at: float) -> None:
        """Take the seats of tables that no longer run out of the queue.

        The lobby the listing comes from lags the log by a moment, so only seats that already
        waited when the previous listing was asked for are judged by this one.
        """
        previous, self._previous_listing_at = self._previous_listing_at, listing_at
        if previous is None:
            return
        for seat in self._queue.keep_tables(running, queued_before=previous):
            self._left_queue(seat, GONE)


def _may_have_bot_seats(table: table_pb2.TableSummary) -> bool:
    """Whether a computer player may hold a seat: the lobby says so, or does not say."""
    return not table.HasField("bot_seats") or table.bot_seats > 0
