"""Plays the seats this replica holds at one table, driven by the table's watch stream.

One watch stream per table, not per seat: every batch bumps the table's version, which is all
a player needs to know to look again. On each new version it reads the table as a spectator
(who is to act, which seats computer players still hold, whether the game is over), then for
each of its seats that is to act reads that seat's own view (``GetTable(seat)``), chooses with
the table's strategy and moves. It never sees more than those views and the public events.

A move's command id is ``bot:{table}:{seat}:{version}``, so a retry by this replica is the
same command (the log scopes command ids to their caller, so another replica's equal id is
another command). When the seat is the only one to act, the move carries the version it was
chosen at as ``expected_version``: another replica deciding from the same view cannot move
twice, and a move chosen from a view that is no longer current is refused (ABORTED) and chosen
again. In a simultaneous phase each seat
acts once and the others' moves do not change its choice, so no version is expected there.
The random generator is seeded from the command id, so any two deciders of one turn choose
the same move.

How the table service answers a move decides what happens next:

* FAILED_PRECONDITION: someone else moved, or the game ended: read again. If the table has
  not changed, the strategy's move itself was refused and the random baseline chooses.
* ABORTED: the table moved on since the view: read again and choose again.
* UNAVAILABLE (or no answer): back off and read again; the command id makes a repeat safe.
* PERMISSION_DENIED: the seat is no longer a computer player's: let go of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from cardtable.bot_service.claims import SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.table_client import TableClient
from cardtable.bots.strategy import RandomStrategy, Strategy, is_offered
from cardtable.platform.logging import BoundLogger, get_logger
from cardtable.views.decode import decode_view
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2

RUNNING, FINISHED = "running", "finished"
#: Look at the table even without news this often (a lost stream message costs no more)...
IDLE_RECHECK_SECONDS = 10.0
#: ...and at most this share of the table's turn timer apart, so that a lost message (a core
#: NATS message is at most once) never costs the seat its turn.
IDLE_RECHECK_SHARE_OF_TIMER = 0.25
MAX_ATTEMPTS_PER_TURN = 8
#: After giving up on a turn (or waiting for a claim's renewal), look again this soon.
RECHECK_AFTER_GIVING_UP_SECONDS = 0.5
#: A watch whose first batch (the table's creation) takes longer is started again.
FIRST_BATCH_TIMEOUT_SECONDS = 10.0
FIRST_BACKOFF_SECONDS = 0.1
MAX_BACKOFF_SECONDS = 5.0
#: Codes after which the same request may simply be tried again later.
TRANSIENT_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
    }
)

Release = Callable[[str, int, str], Awaitable[None]]
StrategyLookup = Callable[[str], Strategy]


def command_id_for(table_id: str, seat: int, version: int) -> str:
    """The one command id of a seat's move chosen at a table version."""
    return f"bot:{table_id}:{seat}:{version}"


def rng_for(command_id: str) -> random.Random:
    """A generator seeded by the turn, so every decider of that turn draws the same."""
    return random.Random(int.from_bytes(hashlib.sha256(command_id.encode()).digest()[:8], "big"))


class Backoff:
    """Capped exponential delays for one run of failures."""

    def __init__(self) -> None:
        self._delay = FIRST_BACKOFF_SECONDS

    def reset(self) -> None:
        self._delay = FIRST_BACKOFF_SECONDS

    async def wait(self) -> None:
        await asyncio.sleep(self._delay)
        self._delay = min(self._delay * 2, MAX_BACKOFF_SECONDS)


class TablePlayer:
    """The seats one replica plays at one table."""

    def __init__(
        self,
        table_id: str,
        *,
        client: TableClient,
        claims: SeatClaims,
        strategies: StrategyLookup,
        default_strategy: str,
        metrics: BotMetrics,
        release: Release,
        reclaim_grace_seconds: float,
    ) -> None:
        self.table_id = table_id
        self._client = client
        self._claims = claims
        self._strategies = strategies
        self._default_strategy = default_strategy
        self._metrics = metrics
        self._release_claim = release
        self._grace_setting = reclaim_grace_seconds
        self._log: BoundLogger = get_logger(__name__, table_id=table_id)
        self.seats: set[int] = set()
        #: The table version from which each seat's turn timeouts count as ours.
        self._seat_since: dict[int, int] = {}
        self.closed = False
        self._wake = asyncio.Event()
        self._created = asyncio.Event()
        self._settings = events_pb2.TableSettings()
        self._strategy: Strategy = RandomStrategy()
        #: What the moves metric counts under: the name the table asked for (a level or a
        #: strategy), so that an operator sees how many moves each level made.
        self._strategy_label = self._strategy.name
        self._watched_version = 0
        self._graced: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self._run(), name=f"table-player-{self.table_id}")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def add(self, seat: int) -> None:
        self.seats.add(seat)
        self._wake.set()

    def drop(self, seat: int) -> None:
        """Stop playing ``seat`` at once; its claim is handled by the caller."""
        self.seats.discard(seat)
        self._seat_since.pop(seat, None)
        self._wake.set()

    async def _release(self, seat: int, reason: str) -> None:
        if seat not in self.seats:
            return
        self.drop(seat)
        self._log.info("seat released", extra={"seat": seat, "reason": reason})
        await self._release_claim(self.table_id, seat, reason)

    async def _release_all(self, reason: str) -> None:
        for seat in sorted(self.seats):
            await self._release(seat, reason)

    async def _run(self) -> None:
        watcher = asyncio.create_task(self._watch(), name=f"table-watch-{self.table_id}")
        backoff = Backoff()
        try:
            while self.seats:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._idle_recheck_seconds)
                self._wake.clear()
                if not self.seats:
                    break
                if not self._created.is_set():
                    continue  # the strategy is not known before the stream's first batch
                try:
                    await self._step()
                    backoff.reset()
                except grpc.aio.AioRpcError as error:
                    if not await self._handled_table_error(error):
                        await backoff.wait()
                        self._wake.set()
        finally:
            self.closed = True
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def _recheck_soon(self) -> None:
        """Look at the table again shortly even if nothing happens there."""
        asyncio.get_running_loop().call_later(RECHECK_AFTER_GIVING_UP_SECONDS, self._wake.set)

    async def _handled_table_error(self, error: grpc.aio.AioRpcError) -> bool:
        """True when the error settles the table for us (it is gone); else retry later."""
        self._metrics.errors.labels(error.code().name).inc()
        if error.code() == grpc.StatusCode.NOT_FOUND:
            self._log.warning("table not found", extra={"error": error.details()})
            await self._release_all("table_not_found")
            return True
        self._log.warning(
            "table service call failed", extra={"code": error.code().name, "error": error.details()}
        )
        return False

    # -- the watch stream ---------------------------------------------------------------------
    async def _watch(self) -> None:
        """Follow the table's public events; every batch wakes the player."""
        backoff = Backoff()
        while self.seats:
            try:
                await self._follow()
            except grpc.aio.AioRpcError as error:
                self._metrics.errors.labels("watch").inc()
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    self._log.warning("table not found", extra={"error": error.details()})
                    await self._release_all("table_not_found")
                    return
                self._log.info(
                    "watch interrupted, resuming",
                    extra={"code": error.code().name, "from_version": self._watched_version},
                )
            except TimeoutError:
                self._metrics.errors.labels("watch").inc()
                self._log.info("watch did not start in time, resuming")
            else:
                backoff.reset()
            await backoff.wait()

    async def _follow(self) -> None:
        """One watch call, from the last version seen, until it ends."""
        call = self._client.watch(self.table_id, self._watched_version)
        responses = aiter(call)
        try:
            if self._watched_version == 0:
                try:
                    first = await asyncio.wait_for(anext(responses), FIRST_BATCH_TIMEOUT_SECONDS)
                except StopAsyncIteration:
                    return
                self._observed(first)
            async for response in responses:
                self._observed(response)
        finally:
            call.cancel()

    def _observed(self, response: table_pb2.WatchTableResponse) -> None:
        self._observe(response)
        self._watched_version = max(self._watched_version, response.version)
        self._wake.set()

    def _observe(self, response: table_pb2.WatchTableResponse) -> None:
        for event in response.events:
            if event.HasField("table_created"):
                self._on_created(event.table_created)
            elif event.HasField("turn_timed_out"):
                timed_out = event.turn_timed_out
                since = self._seat_since.get(timed_out.seat)
                if since is not None and response.version > since:
                    self._metrics.turn_timeouts.inc()
                    self._log.warning(
                        "turn timed out on a computer player's seat",
                        extra={"seat": timed_out.seat, "turn": timed_out.turn},
                    )

    def _on_created(self, created: events_pb2.TableCreated) -> None:
        self._settings = created.settings
        name = created.settings.bot_strategy.strip().lower() or self._default_strategy
        try:
            self._strategy = self._strategies(name)
        except ValueError:  # a strategy this build does not have: the game must go on
            self._log.warning(
                "unknown strategy, using the default",
                extra={"strategy": name, "default": self._default_strategy},
            )
            name = self._default_strategy
            self._strategy = self._strategies(name)
        self._strategy_label = name
        self._created.set()

    @property
    def _idle_recheck_seconds(self) -> float:
        timer_ms = self._settings.turn_timer_ms
        if timer_ms:
            return min(IDLE_RECHECK_SECONDS, timer_ms / 1000 * IDLE_RECHECK_SHARE_OF_TIMER)
        return IDLE_RECHECK_SECONDS

    @property
    def _reclaim_grace_seconds(self) -> float:
        timer_ms = self._settings.turn_timer_ms
        if timer_ms:
            return min(self._grace_setting, timer_ms / 1000 / 4)
        return self._grace_setting

    # -- playing ------------------------------------------------------------------------------
    async def _step(self) -> None:
        """Look at the table as a spectator and move for each of our seats that is to act."""
        table = await self._client.get_table(self.table_id)
        if table.status == FINISHED:
            await self._release_all("finished")
            return
        if table.status != RUNNING:
            return
        for seat in sorted(self.seats):
            if table.seats[seat].kind != events_pb2.PLAYER_KIND_BOT:
                await self._release(seat, "reclaimed")
            else:
                self._seat_since.setdefault(seat, table.version)
        to_act = [seat for seat in sorted(self.seats) if seat in table.game_status.to_act]
        await asyncio.gather(
            *(self._play(seat, owner_away=not table.seats[seat].connected) for seat in to_act)
        )

    async def _play(self, seat: int, *, owner_away: bool) -> None:
        """Make the seat's move for the current turn, if it is still to act."""
        refused_at: int | None = None
        backoff = Backoff()
        for _ in range(MAX_ATTEMPTS_PER_TURN):
            if seat not in self.seats:
                return
            if not self._claims.lease_valid(self.table_id, seat):
                self._recheck_soon()  # the claim is not confirmed: its renewal decides
                return
            started = time.monotonic()
            try:
                reply = await self._client.get_table(self.table_id, seat)
            except grpc.aio.AioRpcError as error:
                if await self._seat_lost(seat, error):
                    return
                await backoff.wait()
                continue
            status = reply.game_status
            if reply.status != RUNNING or status.over or seat not in status.to_act:
                return
            if owner_away and self._graced.get(seat) != reply.version:
                # The person who left may take the seat back with a move: give them a moment.
                self._graced[seat] = reply.version
                await asyncio.sleep(self._reclaim_grace_seconds)
                continue
            command_id = command_id_for(self.table_id, seat, reply.version)
            action = await self._choose(
                decode_view(reply.seat_view),
                command_id,
                fallback=refused_at == reply.version,
            )
            # In a simultaneous phase (Hearts' passing) the other seats' moves do not change
            # this seat's choice, and each seat acts once in it: no version check, or the
            # seats would refuse each other's moves in turn.
            expected = reply.version if len(status.to_act) == 1 else 0
            try:
                await self._client.make_move(self.table_id, seat, action, command_id, expected)
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    refused_at = reply.version
                    self._log.info(
                        "move refused, reading again",
                        extra={"seat": seat, "action": action, "error": error.details()},
                    )
                    continue
                if code == grpc.StatusCode.ABORTED:
                    continue
                if await self._seat_lost(seat, error):
                    return
                await backoff.wait()
                continue
            self._metrics.moves.labels(self._strategy_label).inc()
            self._metrics.move_seconds.observe(time.monotonic() - started)
            return
        self._log.warning("gave up on a turn for now", extra={"seat": seat})
        self._recheck_soon()

    async def _seat_lost(self, seat: int, error: grpc.aio.AioRpcError) -> bool:
        """Count the error; True when it means the seat is not ours to play any more."""
        code = error.code()
        self._metrics.errors.labels(code.name).inc()
        if code == grpc.StatusCode.PERMISSION_DENIED:
            await self._release(seat, "reclaimed")
            return True
        if code == grpc.StatusCode.NOT_FOUND:
            await self._release(seat, "table_not_found")
            return True
        if code not in TRANSIENT_CODES:
            self._log.warning(
                "unexpected answer from the table service",
                extra={"seat": seat, "code": code.name, "error": error.details()},
            )
        return False

    async def _choose(self, view: dict[str, Any], command_id: str, *, fallback: bool) -> str:
        """The strategy's action, or the random baseline's when the strategy fails."""
        strategy: Strategy = RandomStrategy() if fallback else self._strategy
        rng = rng_for(command_id)
        try:
            # In a worker thread: a searching strategy must not stall the other tables.
            action = await asyncio.to_thread(strategy.choose, view, rng)
        except Exception:
            self._metrics.errors.labels("strategy").inc()
            self._log.exception("strategy failed", extra={"strategy": strategy.name})
            return RandomStrategy().choose(view, rng_for(command_id))
        if not is_offered(action, view):
            self._metrics.errors.labels("strategy").inc()
            self._log.warning(
                "strategy chose an action the view does not offer",
                extra={"strategy": strategy.name, "action": action},
            )
            return RandomStrategy().choose(view, rng_for(command_id))
        return action
