"""The application layer: load a table, run a command, append its events, fold them.

Tables are cached in memory and rebuilt from their subject when missing (after a restart, or
when another replica served them). A command runs under the table's local lock, appends with
the table's last known sequence as the expected one, and on a conflict (another replica got
there first) reloads the new batches and decides again, a few times, before giving up with
ABORTED. Retrying a command id that is already in the log returns its result without writing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import nats.errors
from nats.js.errors import APIError

from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import (
    SCHEMA_VERSION,
    AppendConflictError,
    EventStore,
    StoredBatch,
)
from cardtable.platform.log_signing import LogIntegrityError
from cardtable.platform.logging import get_logger
from cardtable.platform.tokens import Principal
from cardtable.platform.tracing import current_trace_id
from cardtable.table_service.commands import (
    Decider,
    Decision,
    Environment,
    Table,
    fill_request,
)
from cardtable.table_service.deadlines import DeadlineBook
from cardtable.table_service.errors import (
    BadRequestError,
    CommandReusedError,
    ConcurrencyConflictError,
    DependencyUnavailableError,
    GameStateLostError,
    LogTamperedError,
    PermissionDeniedError,
    RuleViolationError,
    TableNotFoundError,
)
from cardtable.table_service.events import public, timestamp
from cardtable.table_service.limits import DEFAULT_LIMITS, TableLimits
from cardtable.table_service.lobby_index import LobbyIndex, TableSummary
from cardtable.table_service.log_security import IntegrityListener, LogSecurity, chain_after
from cardtable.table_service.rules_port import SNAPSHOT_ENCODING, RulesPort
from cardtable.table_service.state import (
    BOT,
    FINISHED,
    OPEN,
    PERSON,
    RUNNING,
    GameStep,
    TableState,
    apply_batch,
    is_deal,
    step_message,
)
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

MAX_ATTEMPTS = 5
MAX_COMMAND_ID_CHARS = 128
#: A stored command id: a caller's scoped id (a player id of up to 128 characters, a client's
#: id) and the suffix of a command that appends to two tables.
MAX_STORED_COMMAND_ID_CHARS = 320
CACHE_SIZE = 10_000
#: Finished tables kept in memory; beyond it the least recently used are dropped, and a
#: later read rebuilds them from the log. A finished game is seldom read again (its last
#: view, a rematch), and every table in memory is walked by each full garbage collection:
#: keeping every game served made those pauses grow with the service's age, and even 1,000
#: were most of what a full collection walked (docs/proving-it.md#settings-the-figures-chose).
#: 200 is the last 11 s of games at 1,000 moves/s, minutes at lower rates.
FINISHED_CACHE_SIZE = 200
#: How long after an append the replica that made it has to write the lobby entry and send
#: the seat requests (milliseconds, normally) before a replica reading the table afresh does.
DERIVED_WORK_GRACE_SECONDS = 0.5

_log = get_logger(__name__)

BotRequestSink = Callable[[str, events_pb2.BotSeatRequested], Awaitable[None]]


@dataclass(frozen=True)
class Outcome:
    """A command's result: the table after it, and whether it had been applied already."""

    table: Table
    decision: Decision | None
    already_applied: bool


def check_command_id(command_id: str, limit: int = MAX_COMMAND_ID_CHARS) -> str:
    """A client's command id: required (it is what makes retries safe), printable, bounded."""
    if not command_id or len(command_id) > limit or not command_id.isprintable():
        raise BadRequestError(f"command_id is required: up to {limit} printable characters")
    return command_id


def caller_command_id(player_id: str, command_id: str) -> str:
    """A client's command id as the log stores it: scoped to the caller.

    Clients choose command ids, so two callers may pick the same one, or pick the id a
    computer player or the table's own timer is about to use (``timeout:7``, ``fill``).
    Unscoped, the later command would be answered "already applied" and never run: a seated
    player could keep their own turn from ever timing out. The length prefix keeps different
    callers' ids apart whatever their player ids hold, and the table's own ids never start
    with a digit.

    >>> caller_command_id("ann", "c1")
    '3:ann/c1'
    """
    return f"{len(player_id)}:{player_id}/{check_command_id(command_id)}"


def check_table_id(table_id: str) -> str:
    try:
        return str(uuid.UUID(table_id))
    except ValueError:
        raise BadRequestError(f"not a table id: {table_id[:64]!r}") from None


def _same_command(command_id: str, earlier: bytes, fingerprint: bytes) -> None:
    """Refuse a command id reused for other content (either side unrecorded: a match)."""
    if earlier and fingerprint and earlier != fingerprint:
        raise CommandReusedError(
            f"command id {command_id.rsplit('/', 1)[-1]!r} was already used for a different "
            "command at this table: send a new command id for a new command"
        )


class TableApplication:
    """Runs commands against tables; one instance per process, shared by all calls."""

    def __init__(
        self,
        store: EventStore,
        rules: RulesPort,
        environment: Environment,
        index: LobbyIndex | None = None,
        bot_requests: BotRequestSink | None = None,
        finished_cache_size: int = FINISHED_CACHE_SIZE,
        security: LogSecurity | None = None,
        signed_from_sequence: int = 1,
        limits: TableLimits = DEFAULT_LIMITS,
    ) -> None:
        self.store = store
        self.security = security or LogSecurity.generate()
        #: The first stream sequence whose batches must be signed (platform/log_signing.py).
        self.signed_from_sequence = signed_from_sequence
        #: Told of each batch that failed verification (metrics).
        self.integrity_listeners: list[IntegrityListener] = []
        self.rules = rules
        self.env = environment
        self.decider = Decider(rules, environment, limits)
        self.index = index
        self._bot_requests = bot_requests
        self._cache: OrderedDict[str, Table] = OrderedDict()
        #: The cached tables whose game is over, least recently used first.
        self._finished: OrderedDict[str, None] = OrderedDict()
        #: How many finished tables stay in memory (see FINISHED_CACHE_SIZE).
        self.finished_cache_size = finished_cache_size
        self._locks: dict[str, asyncio.Lock] = {}
        #: The turn-timer deadlines of the tables in memory, for the timers.
        self.deadlines = DeadlineBook()
        #: Called with the table after each append of this replica (turn watchers wait on it).
        self.appended_listeners: list[Callable[[Table], None]] = []
        #: Told of each bot-held seat this service moved for because no computer player did in
        #: time: the bot service is short of capacity (metrics).
        self.fallback_listeners: list[Callable[[str, int], None]] = []
        #: Second looks at tables read afresh while their last append was recent.
        self._looking_again: set[asyncio.Task[None]] = set()

    # -- loading ------------------------------------------------------------------------------
    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    async def load(self, table_id: str, *, refresh: bool = False) -> Table:
        """The table from the cache, or rebuilt from its subject; ``refresh`` catches up."""
        table = self._cache.get(table_id)
        if table is None:
            table = Table(TableState(table_id=table_id))
            await self._catch_up(table)
            if not table.state.exists:
                raise TableNotFoundError(f"no table {table_id}")
            await self._finish_derived_work(table)
        elif refresh:
            await self._catch_up(table)
        self._remember(table)
        return table

    async def read(self, table_id: str, min_version: int = 0) -> Table:
        """The table brought up to date, for a view: under the table's lock, so a view never
        folds a batch while a command of this replica is appending the same one.

        With ``min_version``, a cached table at that version or later is answered as it is:
        the caller knows of no later change, and reading the log would cost a round trip.
        """
        async with self._lock(table_id):
            cached = self._cache.get(table_id) if min_version else None
            if cached is not None and cached.state.version >= min_version:
                self._cache.move_to_end(table_id)
                return cached
            return await self.load(table_id, refresh=True)

    def _remember(self, table: Table) -> None:
        table_id = table.state.table_id
        self._cache[table_id] = table
        self._cache.move_to_end(table_id)
        if table.state.status == FINISHED:
            self._finished[table_id] = None
            self._finished.move_to_end(table_id)
        timer = table.state.timer
        if table.state.status == RUNNING and timer is not None:
            self.deadlines.schedule(table_id, timer.deadline)
        else:
            self.deadlines.cancel(table_id)
        while len(self._cache) > CACHE_SIZE:
            self._forget(next(iter(self._cache)))
        while len(self._finished) > self.finished_cache_size:
            self._forget(next(iter(self._finished)))

    def _forget(self, table_id: str) -> None:
        """Drop a table from memory; the timers' adoption pass reloads it if it runs."""
        self._cache.pop(table_id, None)
        self._finished.pop(table_id, None)
        self._locks.pop(table_id, None)
        self.deadlines.cancel(table_id)

    async def _catch_up(self, table: Table) -> None:
        """Fold the batches after the table's sequence and bring its game state along.

        Each batch is verified first (log_security): one that fails leaves the table as it
        was before it, read-only, and nothing after it is folded.
        """
        new_inputs: list[GameStep] = []
        started_before = table.game_state is not None
        table_id = table.state.table_id
        try:
            if table.broken is None:
                batches = [
                    stored async for stored in self.store.read(table_id, table.state.sequence)
                ]
                # One signature verified for the lot where the chain links hold (a table read
                # afresh has its whole log here): the rest are vouched for by it.
                vouched_from = len(batches) - self.security.vouched(batches)
                for index, stored in enumerate(batches):
                    try:
                        self.security.verify(
                            table.state,
                            stored,
                            self.signed_from_sequence,
                            vouched=index >= vouched_from,
                        )
                    except LogIntegrityError as error:
                        self._broken(table, error)
                        break
                    before = len(table.state.inputs)
                    apply_batch(
                        table.state, self.security.opened(table_id, stored.batch), stored.sequence
                    )
                    chain_after(table.state, stored.payload)
                    new_inputs.extend(table.state.inputs[before:])
        except (nats.errors.Error, APIError, TimeoutError) as error:
            raise DependencyUnavailableError(f"event store: {error!r}") from None
        if table.state.status == OPEN or (started_before and not new_inputs):
            return
        if not started_before:
            await self._rebuild_game_state(table)
            return
        try:
            for step in new_inputs:
                await self._advance(table, step)
        except GameStateLostError:
            await self._rebuild_game_state(table, lost=True)

    async def _rebuild_game_state(self, table: Table, *, lost: bool = False) -> None:
        """The game state rebuilt from every input the table has folded: for a table read
        afresh, or one whose state the rules replica no longer holds (``lost``: rules.proto,
        GameState)."""
        if lost:
            _log.info(
                "the rules replica no longer holds the table's game state: rebuilding it",
                extra={"table_id": table.state.table_id, "inputs": len(table.state.inputs)},
            )
        reply = await self.rules.rebuild(
            rules_pb2.RebuildRequest(
                game=table.state.game,
                players=table.state.seat_count,
                options=common_pb2.GameOptions(values=table.state.options),
                first_dealer=table.state.first_dealer,
                inputs=[step_message(step) for step in table.state.inputs],
                encoding=SNAPSHOT_ENCODING,
            )
        )
        reply.state.scope = table.state.table_id
        table.game_state, table.game_status = reply.state, reply.status

    async def restore_game_state(self, table: Table, lost: rules_pb2.GameState) -> None:
        """Rebuild the game state the rules service lost, unless a command has moved the table
        on meanwhile (its state is then one the rules service just gave)."""
        async with self._lock(table.state.table_id):
            if table.game_state is lost:
                await self._rebuild_game_state(table, lost=True)

    async def _finish_derived_work(self, table: Table) -> None:
        """Redo what follows an append, for a table read afresh whose lobby entry lags its log.

        The lobby entry and the computer players' seat requests follow each append
        (``_after_append``); a replica that dies in between leaves the table as it was in the
        lobby (still open after its fill, say) and its computer players unasked, until a timer
        of its own moves the game on. A table first read from its log shows the gap: its
        summary is not the lobby's. Then the entry is written, and every computer-held seat of
        a running game is requested again (a prompt: the bot service passes over the seats it
        already plays).
        """
        if self.index is None:
            return
        state = table.state
        summary = summary_of(state)
        known = self.index.get(state.table_id)
        if known == summary or (known is None and state.status == FINISHED):
            return  # up to date, or a finished table the lobby let go of
        age = self.env.now() - state.last_batch_at
        if age < DERIVED_WORK_GRACE_SECONDS:  # its writer may be at it still: look again later
            asyncio.get_running_loop().call_later(
                DERIVED_WORK_GRACE_SECONDS - age, self._look_again, state.table_id, state.version
            )
            return
        await self.index.put(summary)
        if state.status != RUNNING or self._bot_requests is None:
            return
        for number, seat in enumerate(state.seats):
            if not seat.is_bot:
                continue
            try:
                await self._bot_requests(state.table_id, fill_request(state, number))
            except Exception as error:
                _log.warning("bot request not published", extra={"error": repr(error)})

    def _look_again(self, table_id: str, version: int) -> None:
        """``_finish_derived_work`` once the grace is over, if the table has not moved on (an
        append since did that work itself)."""
        table = self._cache.get(table_id)
        if table is None or table.state.version != version:
            return
        task = asyncio.create_task(self._finish_derived_work(table))
        self._looking_again.add(task)
        task.add_done_callback(self._looking_again.discard)

    def _broken(self, table: Table, error: LogIntegrityError) -> None:
        """A batch failed verification: the table stays read-only (module doc of log_security)."""
        table.broken = str(error)
        _log.error(
            "a batch of the table's log failed verification: the table is read-only",
            extra={"table_id": table.state.table_id, "problem": str(error)},
        )
        for listener in self.integrity_listeners:
            listener(table.state.table_id, error)

    async def _advance(self, table: Table, step: GameStep) -> None:
        """Apply one input that another replica already logged."""
        assert table.game_state is not None
        seat, action, deck_order = step
        if is_deal(step):
            dealt = await self.rules.deal(
                rules_pb2.DealRequest(
                    state=table.game_state, deck_order=deck_order, by_reference=True
                )
            )
            table.game_state, table.game_status = dealt.state, dealt.status
        else:
            applied = await self.rules.apply_action(
                rules_pb2.ApplyActionRequest(
                    state=table.game_state, seat=seat, action=action, by_reference=True
                )
            )
            table.game_state, table.game_status = applied.state, applied.status

    # -- commands -----------------------------------------------------------------------------
    async def create(
        self,
        command_id: str,
        decide: Callable[[], Awaitable[Decision]],
        *,
        fingerprint: bytes = b"",
    ) -> Outcome:
        """Create a table whose id derives from the command id, so a retry finds the same one."""
        check_command_id(command_id, MAX_STORED_COMMAND_ID_CHARS)
        table_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"cardtable:create:{command_id}"))
        return await self.execute(
            table_id, command_id, lambda table: decide(), creating=True, fingerprint=fingerprint
        )

    async def execute(
        self,
        table_id: str,
        command_id: str,
        decide: Callable[[Table], Awaitable[Decision]],
        *,
        creating: bool = False,
        fingerprint: bytes = b"",
    ) -> Outcome:
        """Run a command with optimistic concurrency and idempotency (see the module doc).

        ``fingerprint`` identifies the command's content: a retry under the same id with other
        content is refused (:class:`CommandReusedError`) instead of answered as the first one.
        """
        check_command_id(command_id, MAX_STORED_COMMAND_ID_CHARS)
        async with self._lock(table_id):
            for attempt in range(MAX_ATTEMPTS):
                table = await self._table_for(table_id, creating=creating, refresh=attempt > 0)
                if command_id in table.state.command_ids:
                    _same_command(command_id, table.state.command_ids[command_id], fingerprint)
                    return Outcome(table, None, already_applied=True)
                if creating and table.state.exists:
                    return Outcome(table, None, already_applied=True)
                if table.broken is not None:
                    raise LogTamperedError(
                        f"the table's log failed verification and the table is read-only "
                        f"until an operator has looked at it: {table.broken}"
                    )
                try:
                    decision = await decide(table)
                except GameStateLostError:
                    # The rules replica lost the state its reference named: rebuild, decide again.
                    await self._rebuild_game_state(table, lost=True)
                    continue
                if not decision.events:
                    return Outcome(table, decision, already_applied=False)
                deal_in_play = table.game_status.deal_number if table.game_status else 0
                stored_events = self.security.sealed(table.state, deal_in_play, decision.events)
                batch = events_pb2.EventBatch(
                    schema_version=SCHEMA_VERSION,
                    table_id=table_id,
                    command_id=command_id,
                    occurred_at=timestamp(self.env.now()),
                    events=stored_events,
                    table_version=table.state.version + 1,
                    previous_batch_sha256=table.state.last_batch_sha256,
                    command_fingerprint=fingerprint,
                )
                payload = batch.SerializeToString()
                signature = await self.security.signature(payload)
                try:
                    appended = await self.store.append(
                        table_id,
                        command_id,
                        payload,
                        table.state.sequence,
                        signature=signature,
                    )
                except AppendConflictError:
                    continue
                except (nats.errors.Error, APIError, TimeoutError) as error:
                    raise DependencyUnavailableError(f"event store: {error!r}") from None
                if appended.duplicate:
                    table = await self.load(table_id, refresh=True)
                    earlier = table.state.command_ids.get(command_id, b"")
                    _same_command(command_id, earlier, fingerprint)
                    return Outcome(table, None, already_applied=True)
                # folded as written, before sealing
                apply_batch(table.state, batch, appended.sequence, decision.events)
                chain_after(table.state, payload)
                table.state.signed = True
                table.adopt(decision)
                self._remember(table)
                _log.debug(
                    "command applied",
                    extra={
                        "table_id": table_id,
                        "command_id": command_id,
                        "version": table.state.version,
                        "trace_id": current_trace_id(),
                    },
                )
                await self._after_append(table, decision)
                return Outcome(table, decision, already_applied=False)
        raise ConcurrencyConflictError("the table kept changing; try again")

    async def _table_for(self, table_id: str, *, creating: bool, refresh: bool) -> Table:
        if not creating:
            return await self.load(table_id, refresh=refresh)
        try:
            return await self.load(table_id, refresh=refresh)
        except TableNotFoundError:
            return Table(TableState(table_id=table_id))

    async def _after_append(self, table: Table, decision: Decision) -> None:
        """Derived work after a successful append: listeners, the lobby index, bot requests."""
        for listener in self.appended_listeners:
            listener(table)
        for seat in decision.fallback_seats:
            _log.warning(
                "no computer player moved in time: the table service moved for the seat "
                "(is the bot service short of capacity?)",
                extra={"table_id": table.state.table_id, "seat": seat},
            )
            for fallback in self.fallback_listeners:
                fallback(table.state.table_id, seat)
        if self.index is not None:
            await self.index.put(summary_of(table.state))
        if self._bot_requests is not None:
            for request in decision.bot_requests:
                try:
                    await self._bot_requests(table.state.table_id, request)
                except Exception as error:
                    _log.warning("bot request not published", extra={"error": repr(error)})

    async def rematch(self, table_id: str, command_id: str, principal: Principal) -> str:
        """A new table with the same game, settings and seats; its game starts at once.

        Whether it is rated is decided afresh from those settings, under the bounds of now.
        """
        old = await self.read(table_id)
        state = old.state
        if state.status != FINISHED:
            raise RuleViolationError("a rematch needs a finished game")
        if state.seat_of(principal.player_id) is None and (
            state.owned_seat_of(principal.player_id) is None
        ):
            raise PermissionDeniedError("only a player of this table may ask for a rematch")
        if state.rematch_table_id:
            return state.rematch_table_id
        new_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"cardtable:rematch:{table_id}"))

        async def decide_new(table: Table) -> Decision:
            created = events_pb2.TableCreated(
                game=state.game,
                seats=state.seat_count,
                options=common_pb2.GameOptions(values=state.options),
                settings=state.settings,
                created_by=principal.player_id,
                rematch_of=table_id,
            )
            created.rated = await self.decider.rated(created)
            events = [public(table_created=created)]
            for number, seat in enumerate(state.seats):
                person = seat.owner_id or (seat.player_id if not seat.is_bot else "")
                player_id = person or seat.player_id
                events.append(
                    public(
                        player_seated=events_pb2.PlayerSeated(
                            seat=number,
                            player_id=player_id,
                            kind=PERSON if person else BOT,
                            display_name=player_id,
                        )
                    )
                )
            fresh = Table(TableState(table_id=new_id))
            apply_batch(fresh.state, events_pb2.EventBatch(events=events), 0)
            decision = Decision(events=events)
            await self.decider.begin_game(fresh, decision)
            return decision

        await self.execute(new_id, f"{command_id}:new", decide_new, creating=True)
        await self.execute(
            table_id,
            f"{command_id}:rematch",
            lambda table: _rematch_created(new_id),
        )
        return new_id

    async def game_record(self, table_id: str) -> dict[str, Any]:
        """The finished game's record (cardtable.eventlog.records), from its log: only once the
        game is over, when every deal's cards may be shown."""
        table = await self.read(table_id)
        if table.state.status != FINISHED:
            raise RuleViolationError("the game is not over: its record would show hidden cards")
        batches = [stored.batch for stored in await self.history(table_id)]
        return record_from_batches(table_id, batches)

    def is_cached(self, table_id: str) -> bool:
        return table_id in self._cache

    async def history(
        self, table_id: str, after_version: int = 0, after_sequence: int = 0
    ) -> list[StoredBatch]:
        """The table's batches after a version, reading the log after ``after_sequence``."""
        try:
            return [
                stored
                async for stored in self.store.read(table_id, after_sequence)
                if stored.batch.table_version > after_version
            ]
        except (nats.errors.Error, APIError, TimeoutError) as error:
            raise DependencyUnavailableError(f"event store: {error!r}") from None


async def _rematch_created(new_table_id: str) -> Decision:
    created = events_pb2.RematchCreated(new_table_id=new_table_id)
    return Decision(events=[public(rematch_created=created)])


def summary_of(state: TableState) -> TableSummary:
    fill_at = 0.0
    if state.status == OPEN and state.settings.fill_with_bots:
        fill_at = state.created_at + state.settings.fill_wait_ms / 1000.0
    return TableSummary(
        table_id=state.table_id,
        game=state.game,
        seats=state.seat_count,
        seats_taken=state.seat_count - len(state.free_seats()),
        status=state.status,
        options=dict(state.options),
        created_at=state.created_at,
        finished_at=state.finished_at,
        fill_at=fill_at,
        bot_seats=sum(1 for seat in state.seats if seat.is_bot),
        rated=state.rated,
        created_by=state.created_by,
        people=tuple(seat.player_id for seat in state.seats if seat.kind == PERSON),
    )
