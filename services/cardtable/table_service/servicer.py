"""The TableService servicer: authenticate, translate protobuf to commands, and back.

Every deliberate error becomes its status code here: INVALID_ARGUMENT, UNAUTHENTICATED,
PERMISSION_DENIED, NOT_FOUND, FAILED_PRECONDITION (with the rules' sentence), ABORTED,
UNAVAILABLE. A refused command has appended nothing: decisions only write once accepted.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf.message import Message
from nats.aio.client import Client as NatsClient

from cardtable.engine.record import dumps_record
from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import SEQUENCE_HEADER
from cardtable.platform.event_upcasting import upcast_event
from cardtable.platform.grpc_server import bounded_details
from cardtable.platform.log_signing import ALGORITHM
from cardtable.platform.logging import get_logger
from cardtable.platform.tokens import Principal, TokenCodec, TokenRefusedError, bearer_token
from cardtable.platform.tracing import context_from_metadata, current, current_trace_id
from cardtable.table_service.application import (
    Outcome,
    TableApplication,
    caller_command_id,
    check_table_id,
)
from cardtable.table_service.commands import Decision, Table
from cardtable.table_service.errors import (
    BadRequestError,
    CommandReusedError,
    ConcurrencyConflictError,
    DependencyUnavailableError,
    LogTamperedError,
    NotAuthenticatedError,
    PermissionDeniedError,
    RuleViolationError,
    TableError,
    TableNotFoundError,
)
from cardtable.table_service.limits import check_request_size
from cardtable.table_service.lobby_index import TableSummary
from cardtable.table_service.metrics import TableMetrics
from cardtable.table_service.pipeline import UnaryMethod, serve_pipeline
from cardtable.table_service.quotas import (
    DEFAULT_QUOTAS,
    PlayerTurns,
    QuotaExceededError,
    QuotaSettings,
    RateLimiter,
    WatchCounter,
    check_open_tables,
    check_seats,
)
from cardtable.table_service.state import FINISHED, OPEN, RUNNING, visible
from cardtable.table_service.table_changes import TableChanges
from cardtable.table_service.turn_stream import holds_seat, turns, view_of
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

Reply = TypeVar("Reply")
Context = grpc.aio.ServicerContext[Any, Any]

#: Each setting a CreateTable request leaves unset (docs/rules.md: timer 30 s, fill after 20 s).
DEFAULT_SETTINGS = events_pb2.TableSettings(
    turn_timer_ms=30_000, fill_with_bots=True, fill_wait_ms=20_000, bot_strategy="rules"
)


def settings_with_defaults(requested: events_pb2.TableSettings) -> events_pb2.TableSettings:
    """The request's settings, with ``DEFAULT_SETTINGS`` for each field it left unset.

    The fields have presence, so a timer of 0 (off) or fill set to false is kept as asked,
    while a request that only names a strategy still gets the timer and the fill.
    """
    resolved = events_pb2.TableSettings()
    resolved.CopyFrom(DEFAULT_SETTINGS)
    resolved.MergeFrom(requested)
    return resolved


MAX_PAGE_SIZE = 200
_log = get_logger(__name__)
_STATUS_CODES: dict[type[TableError], grpc.StatusCode] = {
    BadRequestError: grpc.StatusCode.INVALID_ARGUMENT,
    NotAuthenticatedError: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDeniedError: grpc.StatusCode.PERMISSION_DENIED,
    TableNotFoundError: grpc.StatusCode.NOT_FOUND,
    RuleViolationError: grpc.StatusCode.FAILED_PRECONDITION,
    ConcurrencyConflictError: grpc.StatusCode.ABORTED,
    DependencyUnavailableError: grpc.StatusCode.UNAVAILABLE,
    CommandReusedError: grpc.StatusCode.ALREADY_EXISTS,
    QuotaExceededError: grpc.StatusCode.RESOURCE_EXHAUSTED,
    LogTamperedError: grpc.StatusCode.DATA_LOSS,
}


async def guarded(
    context: Context,
    work: Callable[[], Awaitable[Reply]],
    metrics: TableMetrics | None = None,
    method: str = "",
) -> Reply:
    """Run ``work`` in the caller's trace context; typed errors become their status codes."""
    with current(context_from_metadata(context.invocation_metadata())):
        try:
            return await work()
        except TableError as error:
            if metrics is not None:
                metrics.rejected(method, error)
            await refuse(context, error, metrics)
    raise AssertionError("context.abort always raises")  # pragma: no cover


async def refuse(context: Context, error: TableError, metrics: TableMetrics | None) -> NoReturn:
    """End the call with the error's status; a quota says when to retry (``retry-after-ms``)."""
    if isinstance(error, QuotaExceededError):
        if metrics is not None:
            metrics.quota_refusals.labels(error.limit).inc()
        if error.retry_after_seconds is not None:
            milliseconds = max(1, round(error.retry_after_seconds * 1000))
            context.set_trailing_metadata((("retry-after-ms", str(milliseconds)),))
    code = _STATUS_CODES.get(type(error), grpc.StatusCode.INTERNAL)
    await context.abort(code, bounded_details(str(error)))


def _seat_infos(table: Table) -> list[table_pb2.SeatInfo]:
    return [
        table_pb2.SeatInfo(
            seat=number,
            player_id=seat.player_id,
            kind=events_pb2.PlayerKind.ValueType(seat.kind),
            connected=not seat.owner_id,
        )
        for number, seat in enumerate(table.state.seats)
    ]


def _page(token: str) -> int:
    """The offset a page token stands for; tokens are issued only for offsets >= 0."""
    if not token:
        return 0
    try:
        start = int(base64.urlsafe_b64decode(token.encode()).decode())
    except (ValueError, UnicodeDecodeError):
        start = -1
    if start < 0:
        raise BadRequestError("page_token is not one this service issued")
    return start


def fingerprint(request: Message) -> bytes:
    """What identifies a command's content: its request without the command id, hashed."""
    content = type(request)()
    content.CopyFrom(request)
    content.ClearField("command_id")
    return hashlib.sha256(content.SerializeToString(deterministic=True)).digest()[:16]


def _scoped(principal: Principal, command_id: str) -> str:
    """The request's command id, checked, as the log stores it for this caller."""
    return caller_command_id(principal.player_id, command_id)


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """Thin: every rule question goes through the application to the rules service."""

    def __init__(
        self,
        app: TableApplication,
        tokens: TokenCodec,
        nats: NatsClient | None,
        metrics: TableMetrics | None = None,
        quotas: QuotaSettings = DEFAULT_QUOTAS,
    ) -> None:
        self._app = app
        self._tokens = tokens
        self._nats = nats
        self._metrics = metrics
        self._quotas = quotas
        self._rate = RateLimiter(quotas.mutations_per_second, quotas.mutation_burst)
        self._watches = WatchCounter(quotas)
        self._turns = PlayerTurns()
        self._changes = TableChanges(nats, app.store)
        app.appended_listeners.append(self._changes.appended)
        if metrics is not None:
            app.integrity_listeners.append(metrics.log_integrity_failed)
            app.fallback_listeners.append(lambda table_id, seat: metrics.bot_fallback_moves.inc())

    def _limited(self, principal: Principal) -> Principal:
        """Spend one of the caller's mutating calls (the bot service, which plays many seats
        under one id, has its own bounds: its seats)."""
        if self._quotas.enabled and not principal.is_bot:
            self._quota_checked("mutation_rate")
            self._rate.take(principal.player_id)
        return principal

    @contextlib.asynccontextmanager
    async def _counted(self, principal: Principal) -> AsyncIterator[None]:
        """Around a command that a lobby-counted quota checks: one per player at a time."""
        if not self._quotas.enabled or principal.is_bot:
            yield
            return
        async with self._turns.turn(principal.player_id):
            yield

    def _quota_checked(self, check: str) -> None:
        if self._metrics is not None:
            self._metrics.quota_checked(check)

    def _check_open_tables(self, principal: Principal) -> None:
        if not self._quotas.enabled or self._app.index is None or principal.is_bot:
            return
        self._quota_checked("open_tables_per_player")
        open_tables = sum(
            1
            for status in (OPEN, RUNNING)
            for summary in self._app.index.with_status(status)
            if summary.created_by == principal.player_id and _counts_as_open(summary)
        )
        check_open_tables(principal.player_id, open_tables, self._quotas)

    async def _join(self, table: Table, principal: Principal, seat: int | None) -> Decision:
        """Seat ``principal``, within their quota of seats (computer players have none)."""
        index = self._app.index
        if (
            self._quotas.enabled
            and index is not None
            and not principal.is_bot
            and table.state.seat_of(principal.player_id) is None
        ):
            self._quota_checked("seats_per_player")
            check_seats(index.seats_held(principal.player_id), self._quotas)
        return await self._app.decider.join(table, principal, seat)

    def _hold_watch(self, context: Context) -> Callable[[], None]:
        """One of the caller's watch streams: a person's or an anonymous watcher's counts
        against the quotas; a computer player's does not (the bot service watches every table
        it plays, bounded by its seats, and a stream refused to it would stall a game)."""
        try:
            principal = self._optional_principal(context)
        except TableError:
            principal = None
        if principal is not None and principal.is_bot:
            return lambda: None
        return self._watches.hold(principal.player_id if principal is not None else None)

    def _principal(self, context: Context) -> Principal:
        try:
            return self._tokens.verify(bearer_token(context.invocation_metadata()))
        except TokenRefusedError as refused:
            raise NotAuthenticatedError(str(refused)) from None

    def _optional_principal(self, context: Context) -> Principal | None:
        try:
            token = bearer_token(context.invocation_metadata())
        except TokenRefusedError:
            return None
        try:
            return self._tokens.verify(token)
        except TokenRefusedError as refused:
            raise NotAuthenticatedError(str(refused)) from None

    # -- lobby --------------------------------------------------------------------------------
    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: Context
    ) -> table_pb2.CreateTableResponse:
        async def work() -> table_pb2.CreateTableResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            created = events_pb2.TableCreated(
                game=request.game.strip().lower(),
                seats=request.seats,
                options=request.options,
                settings=settings_with_defaults(request.settings),
            )

            async def decide() -> Decision:
                self._check_open_tables(principal)
                return await self._app.decider.create_table(principal, created)

            async with self._counted(principal):
                outcome = await self._app.create(
                    _scoped(principal, request.command_id), decide, fingerprint=fingerprint(request)
                )
            return table_pb2.CreateTableResponse(
                table_id=outcome.table.state.table_id, version=outcome.table.state.version
            )

        return await guarded(context, work, self._metrics, "CreateTable")

    async def ListTables(
        self, request: table_pb2.ListTablesRequest, context: Context
    ) -> table_pb2.ListTablesResponse:
        async def work() -> table_pb2.ListTablesResponse:
            if request.status not in ("", OPEN, RUNNING, FINISHED):
                raise BadRequestError("status is 'open', 'running', 'finished' or empty")
            size = min(request.page_size or 50, MAX_PAGE_SIZE)
            start = _page(request.page_token)
            statuses = (request.status,) if request.status else (OPEN, RUNNING)
            summaries = [
                summary
                for summary in (self._app.index.tables(*statuses) if self._app.index else [])
                if not request.game or summary.game == request.game
            ]
            page = summaries[start : start + size]
            next_token = ""
            if start + size < len(summaries):
                next_token = base64.urlsafe_b64encode(str(start + size).encode()).decode()
            return table_pb2.ListTablesResponse(
                tables=[_summary_message(summary) for summary in page], next_page_token=next_token
            )

        return await guarded(context, work, self._metrics, "ListTables")

    async def JoinTable(
        self, request: table_pb2.JoinTableRequest, context: Context
    ) -> table_pb2.JoinTableResponse:
        async def work() -> table_pb2.JoinTableResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            table_id = check_table_id(request.table_id)
            seat = request.seat if request.HasField("seat") else None
            async with self._counted(principal):
                outcome = await self._app.execute(
                    table_id,
                    _scoped(principal, request.command_id),
                    lambda table: self._join(table, principal, seat),
                    fingerprint=fingerprint(request),
                )
            return table_pb2.JoinTableResponse(
                seat=_own_seat(outcome, principal), version=outcome.table.state.version
            )

        return await guarded(context, work, self._metrics, "JoinTable")

    async def QuickSeat(
        self, request: table_pb2.QuickSeatRequest, context: Context
    ) -> table_pb2.QuickSeatResponse:
        async def work() -> table_pb2.QuickSeatResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            async with self._counted(principal):
                return await self._quick_seat(request, principal)

        return await guarded(context, work, self._metrics, "QuickSeat")

    async def _quick_seat(
        self, request: table_pb2.QuickSeatRequest, principal: Principal
    ) -> table_pb2.QuickSeatResponse:
        """A seat at an open table like the one asked for, or at a new one."""
        command_id = _scoped(principal, request.command_id)
        game = request.game.strip().lower()
        wanted = dict(request.options.values)
        candidates = [
            summary
            for summary in (self._app.index.tables(OPEN) if self._app.index else [])
            if summary.game == game
            and summary.seats_taken < summary.seats
            and (not request.seats or summary.seats == request.seats)
            and summary.options == wanted
        ]
        for summary in candidates:
            try:
                outcome = await self._app.execute(
                    summary.table_id,
                    f"{command_id}:join",
                    lambda table: self._join(table, principal, None),
                )
            except (RuleViolationError, ConcurrencyConflictError, TableNotFoundError):
                continue  # filled up or started meanwhile: try the next one
            return table_pb2.QuickSeatResponse(
                table_id=summary.table_id,
                seat=_own_seat(outcome, principal),
                version=outcome.table.state.version,
            )
        created = events_pb2.TableCreated(
            game=game, seats=request.seats, options=request.options, settings=DEFAULT_SETTINGS
        )

        async def decide() -> Decision:
            self._check_open_tables(principal)
            return await self._app.decider.create_table(principal, created)

        made = await self._app.create(f"{command_id}:create", decide)
        table_id = made.table.state.table_id
        outcome = await self._app.execute(
            table_id,
            f"{command_id}:join",
            lambda table: self._join(table, principal, None),
        )
        return table_pb2.QuickSeatResponse(
            table_id=table_id,
            seat=_own_seat(outcome, principal),
            version=outcome.table.state.version,
        )

    async def LeaveTable(
        self, request: table_pb2.LeaveTableRequest, context: Context
    ) -> table_pb2.LeaveTableResponse:
        async def work() -> table_pb2.LeaveTableResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            outcome = await self._app.execute(
                check_table_id(request.table_id),
                _scoped(principal, request.command_id),
                lambda table: self._app.decider.leave(table, principal),
                fingerprint=fingerprint(request),
            )
            return table_pb2.LeaveTableResponse(version=outcome.table.state.version)

        return await guarded(context, work, self._metrics, "LeaveTable")

    async def StartGame(
        self, request: table_pb2.StartGameRequest, context: Context
    ) -> table_pb2.StartGameResponse:
        async def work() -> table_pb2.StartGameResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            outcome = await self._app.execute(
                check_table_id(request.table_id),
                _scoped(principal, request.command_id),
                lambda table: self._app.decider.start(table, principal),
                fingerprint=fingerprint(request),
            )
            return table_pb2.StartGameResponse(version=outcome.table.state.version)

        return await guarded(context, work, self._metrics, "StartGame")

    async def Rematch(
        self, request: table_pb2.RematchRequest, context: Context
    ) -> table_pb2.RematchResponse:
        async def work() -> table_pb2.RematchResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            new_table_id = await self._app.rematch(
                check_table_id(request.table_id), _scoped(principal, request.command_id), principal
            )
            return table_pb2.RematchResponse(table_id=new_table_id)

        return await guarded(context, work, self._metrics, "Rematch")

    # -- play ---------------------------------------------------------------------------------
    async def MakeMove(
        self, request: table_pb2.MakeMoveRequest, context: Context
    ) -> table_pb2.MakeMoveResponse:
        async def work() -> table_pb2.MakeMoveResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            table_id = check_table_id(request.table_id)

            async def decide(table: Table) -> Any:
                if request.expected_version and table.state.version != request.expected_version:
                    raise ConcurrencyConflictError(
                        f"the table is at version {table.state.version}, "
                        f"not {request.expected_version}"
                    )
                return await self._app.decider.move(table, principal, request.seat, request.action)

            outcome = await self._app.execute(
                table_id,
                _scoped(principal, request.command_id),
                decide,
                fingerprint=fingerprint(request),
            )
            table = outcome.table
            if self._metrics is not None and not outcome.already_applied:
                self._metrics.moves.labels(table.state.game).inc()
            _log.info(
                "move",
                extra={
                    "table_id": table_id,
                    "player_id": principal.player_id,
                    "seat": request.seat,
                    "version": table.state.version,
                    "already_applied": outcome.already_applied,
                    "trace_id": current_trace_id(),
                },
            )
            return table_pb2.MakeMoveResponse(version=table.state.version, status=table.game_status)

        return await guarded(context, work, self._metrics, "MakeMove")

    # -- views --------------------------------------------------------------------------------
    async def _viewer_seat(self, table: Table, seat: int | None, context: Context) -> int | None:
        """The seat whose cards the caller may see: must be the caller's own."""
        if seat is None:
            return None
        principal = self._principal(context)
        if not 0 <= seat < table.state.seat_count:
            raise BadRequestError(f"there is no seat {seat} at this table")
        if holds_seat(table, seat, principal):
            return seat
        raise PermissionDeniedError(f"you may only view your own seat, not seat {seat}")

    async def GetTable(
        self, request: table_pb2.GetTableRequest, context: Context
    ) -> table_pb2.GetTableResponse:
        async def work() -> table_pb2.GetTableResponse:
            table = await self._app.read(check_table_id(request.table_id), request.min_version)
            seat = await self._viewer_seat(
                table, request.seat if request.HasField("seat") else None, context
            )
            reply = table_pb2.GetTableResponse(
                table_id=table.state.table_id,
                game=table.state.game,
                status=table.state.status,
                version=table.state.version,
                seats=_seat_infos(table),
                created_by=table.state.created_by,
            )
            if table.game_state is None:
                return reply
            view, status = await view_of(self._app, table, seat)
            reply.seat_view.CopyFrom(view)
            reply.game_status.CopyFrom(status)
            return reply

        return await guarded(context, work, self._metrics, "GetTable")

    async def WatchTurns(
        self, request: table_pb2.WatchTurnsRequest, context: Context
    ) -> AsyncIterator[table_pb2.WatchTurnsResponse]:
        """The caller's seat's view at each of its turns (see ``turn_stream``), within the
        watch-stream quotas."""
        async for turn in self._within_watch_quotas(context, self._watch_turns(request, context)):
            yield turn

    async def _within_watch_quotas(
        self, context: Context, stream: AsyncIterator[Reply]
    ) -> AsyncIterator[Reply]:
        """``stream`` while it holds one of the caller's watch streams (quotas.py)."""
        if self._quotas.enabled:
            self._quota_checked("watch_streams")
        try:
            release = self._hold_watch(context)
        except TableError as error:
            await refuse(context, error, self._metrics)
        try:
            async for reply in stream:
                yield reply
        finally:
            release()

    async def _watch_turns(
        self, request: table_pb2.WatchTurnsRequest, context: Context
    ) -> AsyncIterator[table_pb2.WatchTurnsResponse]:
        try:
            table_id = check_table_id(request.table_id)
            table = await self._app.read(table_id)
            seat = await self._viewer_seat(table, request.seat, context)
            assert seat is not None
            principal = self._principal(context)
            async for turn in turns(
                self._app, self._changes, table_id, seat, principal, request.after_version
            ):
                yield turn
        except TableError as error:
            await context.abort(
                _STATUS_CODES.get(type(error), grpc.StatusCode.INTERNAL),
                bounded_details(str(error)),
            )

    async def WatchTable(
        self, request: table_pb2.WatchTableRequest, context: Context
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        """History after ``from_version``, then each new batch as it lands, redacted; within
        the watch-stream quotas."""
        async for reply in self._within_watch_quotas(context, self._watch_table(request, context)):
            yield reply

    async def _watch_table(
        self, request: table_pb2.WatchTableRequest, context: Context
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        try:
            table_id = check_table_id(request.table_id)
            table = await self._app.read(table_id)
            seat = await self._viewer_seat(
                table, request.seat if request.HasField("seat") else None, context
            )
            principal = self._optional_principal(context) if seat is not None else None
        except TableError as error:
            await context.abort(
                _STATUS_CODES.get(type(error), grpc.StatusCode.INTERNAL),
                bounded_details(str(error)),
            )
            return
        # Batches as they are stored: the republished copy, not the subject itself, whose
        # core subscribers also get the appends JetStream refused (see the store's doc).
        live_are_stored = self._app.store.republishes
        queue: asyncio.Queue[tuple[events_pb2.EventBatch, int]] = asyncio.Queue()
        subscription = None
        if self._nats is not None:

            async def on_message(message: Any) -> None:
                sequence = (message.headers or {}).get(SEQUENCE_HEADER, "0")
                batch = events_pb2.EventBatch.FromString(message.data)
                queue.put_nowait((batch, int(sequence) if sequence.isdigit() else 0))

            subscription = await self._nats.subscribe(
                self._app.store.live_subject(table_id), cb=on_message
            )
        sent = request.from_version
        read_from = 0  # stream sequence up to which the log has been read
        try:
            backlog = True
            while True:
                if backlog:  # the start, or a gap in the live messages: read the log
                    for stored in await self._app.history(table_id, sent, read_from):
                        yield await self._redacted(table_id, stored.batch, seat, principal)
                        sent, read_from = stored.batch.table_version, stored.sequence
                    backlog = False
                if subscription is None:
                    return
                batch, sequence = await queue.get()
                if batch.table_version <= sent:
                    continue
                if not live_are_stored:  # maybe a refused append: the log tells
                    backlog = True
                    continue
                if batch.table_version == sent + 1:
                    yield await self._redacted(table_id, batch, seat, principal)
                    sent, read_from = batch.table_version, max(read_from, sequence)
                else:
                    backlog = True
        except TableError as error:
            await context.abort(
                _STATUS_CODES.get(type(error), grpc.StatusCode.INTERNAL),
                bounded_details(str(error)),
            )
        finally:
            if subscription is not None:
                with contextlib.suppress(Exception):
                    await subscription.unsubscribe()

    async def _redacted(
        self,
        table_id: str,
        batch: events_pb2.EventBatch,
        seat: int | None,
        principal: Principal | None,
    ) -> table_pb2.WatchTableResponse:
        """Only the events the viewer may see, opened, as they are written now (an older log's
        facts typed and reasons as enums: platform/event_upcasting.py); a viewer who lost the
        seat sees public ones. Only batches that passed verification are sent (log_security).

        Who holds the seat is judged at this batch's version or later: this replica's cached
        table lags the batches another replica appended, and a seat given up there (a leave,
        a computer player's takeover) must stop showing its cards here from that batch on.
        """
        table = await self._app.read(table_id, min_version=batch.table_version)
        if batch.table_version > table.state.version:
            raise LogTamperedError(
                f"the table's log failed verification after version {table.state.version}: "
                f"{table.broken or 'the batch is not in the log'}"
            )
        if seat is not None and (principal is None or not holds_seat(table, seat, principal)):
            seat = None
        security = self._app.security
        return table_pb2.WatchTableResponse(
            version=batch.table_version,
            events=[
                upcast_event(security.open_event(table_id, event))
                for event in batch.events
                if visible(event, seat)
            ],
        )

    async def GetLogKeys(
        self, request: table_pb2.GetLogKeysRequest, context: Context
    ) -> table_pb2.GetLogKeysResponse:
        async def work() -> table_pb2.GetLogKeysResponse:
            security = self._app.security
            current = security.signer.key_id
            return table_pb2.GetLogKeysResponse(
                keys=[
                    table_pb2.LogKey(
                        key_id=key_id,
                        algorithm=ALGORITHM,
                        public_key=public_key,
                        current=key_id == current,
                    )
                    for key_id, public_key in sorted(security.verifier.public_keys.items())
                ]
            )

        return await guarded(context, work, self._metrics, "GetLogKeys")

    async def GetGameRecord(
        self, request: table_pb2.GetGameRecordRequest, context: Context
    ) -> table_pb2.GetGameRecordResponse:
        async def work() -> table_pb2.GetGameRecordResponse:
            table_id = check_table_id(request.table_id)
            table = await self._app.read(table_id)
            if table.state.status != FINISHED:
                raise RuleViolationError("the game is not over: its record would show hidden cards")
            batches = [stored.batch for stored in await self._app.history(table_id)]
            record = record_from_batches(table_id, batches)
            return table_pb2.GetGameRecordResponse(record_json=dumps_record(record))

        return await guarded(context, work, self._metrics, "GetGameRecord")

    # -- many players' calls over one stream ----------------------------------------------------
    async def Pipeline(
        self, request_iterator: AsyncIterator[table_pb2.PipelineRequest], context: Context
    ) -> AsyncIterator[table_pb2.PipelineResponse]:
        """CreateTable, JoinTable, GetTable and MakeMove calls, each with its own token (see
        table_service/pipeline.py)."""
        methods: dict[str, UnaryMethod] = {
            "create_table": self.CreateTable,
            "join_table": self.JoinTable,
            "get_table": self.GetTable,
            "make_move": self.MakeMove,
        }
        async for response in serve_pipeline(request_iterator, context, methods):
            yield response


def _own_seat(outcome: Outcome, principal: Principal) -> int:
    seat = outcome.table.state.seat_of(principal.player_id)
    if seat is None:
        raise RuleViolationError("you have no seat at this table")
    return seat


def _counts_as_open(summary: TableSummary) -> bool:
    """A table not yet started, or one computer players alone play: both count against their
    creator's open tables (a game of computer players only costs the bot service its seats and
    serves nobody at the table, so a creator may not start them without bound)."""
    return summary.status == OPEN or (
        summary.status == RUNNING
        and summary.bot_seats is not None
        and summary.bot_seats >= summary.seats
    )


def _summary_message(summary: TableSummary) -> table_pb2.TableSummary:
    return table_pb2.TableSummary(
        table_id=summary.table_id,
        game=summary.game,
        seats=summary.seats,
        seats_taken=summary.seats_taken,
        status=summary.status,
        options=common_pb2.GameOptions(values=summary.options),
        bot_seats=summary.bot_seats,
        rated=summary.rated,
    )
