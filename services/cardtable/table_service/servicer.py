"""The TableService servicer: authenticate, translate protobuf to commands, and back.

Every deliberate error becomes its status code here: INVALID_ARGUMENT, UNAUTHENTICATED,
PERMISSION_DENIED, NOT_FOUND, FAILED_PRECONDITION (with the rules' sentence), ABORTED,
UNAVAILABLE. A refused command has appended nothing: decisions only write once accepted.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf.message import Message

from cardtable.engine.record import dumps_record
from cardtable.platform.grpc_server import bounded_details
from cardtable.platform.log_signing import ALGORITHM
from cardtable.platform.logging import get_logger
from cardtable.platform.tokens import Principal, TokenCodec, TokenRefusedError, bearer_token
from cardtable.platform.tracing import context_from_metadata, current, current_trace_id
from cardtable.table_service.application import (
    TableApplication,
    caller_command_id,
    check_table_id,
)
from cardtable.table_service.commands import Table
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
from cardtable.table_service.matchmaking import Lobby, table_asked_for
from cardtable.table_service.metrics import TableMetrics
from cardtable.table_service.pipeline import UnaryMethod, serve_pipeline
from cardtable.table_service.quotas import (
    DEFAULT_QUOTAS,
    QuotaExceededError,
    QuotaSettings,
    RateLimiter,
    WatchCounter,
)
from cardtable.table_service.table_changes import TableChanges
from cardtable.table_service.table_stream import batches
from cardtable.table_service.turn_stream import turns
from cardtable.table_service.viewers import view_of, viewer_seat
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

Reply = TypeVar("Reply")
Context = grpc.aio.ServicerContext[Any, Any]

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
    code = next(
        (_STATUS_CODES[kind] for kind in type(error).__mro__ if kind in _STATUS_CODES),
        grpc.StatusCode.INTERNAL,
    )
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
        lobby: Lobby,
        changes: TableChanges,
        metrics: TableMetrics | None = None,
        quotas: QuotaSettings = DEFAULT_QUOTAS,
    ) -> None:
        self._app = app
        self._tokens = tokens
        self._lobby = lobby
        self._changes = changes
        self._metrics = metrics
        self._quotas = quotas
        self._rate = RateLimiter(quotas.mutations_per_second, quotas.mutation_burst)
        self._watches = WatchCounter(quotas)

    def _limited(self, principal: Principal) -> Principal:
        """Spend one of the caller's mutating calls (the bot service, which plays many seats
        under one id, has its own bounds: its seats)."""
        if self._quotas.enabled and not principal.is_bot:
            self._quota_checked("mutation_rate")
            self._rate.take(principal.player_id)
        return principal

    def _quota_checked(self, check: str) -> None:
        if self._metrics is not None:
            self._metrics.quota_checked(check)

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
            outcome = await self._lobby.create_table(
                principal,
                _scoped(principal, request.command_id),
                table_asked_for(
                    request.game, request.seats, request.options.values, request.settings
                ),
                seat=request.seat if request.HasField("seat") else None,
                fingerprint=fingerprint(request),
            )
            state = outcome.table.state
            response = table_pb2.CreateTableResponse(table_id=state.table_id, version=state.version)
            seat = state.seat_of(principal.player_id) if request.HasField("seat") else None
            if seat is not None:
                response.seat = seat
            return response

        return await guarded(context, work, self._metrics, "CreateTable")

    async def ListTables(
        self, request: table_pb2.ListTablesRequest, context: Context
    ) -> table_pb2.ListTablesResponse:
        async def work() -> table_pb2.ListTablesResponse:
            summaries = self._lobby.tables(request.status, request.game)
            size = min(request.page_size or 50, MAX_PAGE_SIZE)
            start = _page(request.page_token)
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
            seating = await self._lobby.join_table(
                principal,
                check_table_id(request.table_id),
                _scoped(principal, request.command_id),
                request.seat if request.HasField("seat") else None,
                fingerprint=fingerprint(request),
            )
            return table_pb2.JoinTableResponse(seat=seating.seat, version=seating.version)

        return await guarded(context, work, self._metrics, "JoinTable")

    async def QuickSeat(
        self, request: table_pb2.QuickSeatRequest, context: Context
    ) -> table_pb2.QuickSeatResponse:
        async def work() -> table_pb2.QuickSeatResponse:
            check_request_size(request)
            principal = self._limited(self._principal(context))
            seating = await self._lobby.quick_seat(
                principal,
                _scoped(principal, request.command_id),
                table_asked_for(request.game, request.seats, request.options.values),
            )
            return table_pb2.QuickSeatResponse(
                table_id=seating.table_id, seat=seating.seat, version=seating.version
            )

        return await guarded(context, work, self._metrics, "QuickSeat")

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
            outcome = await self._app.execute(
                table_id,
                _scoped(principal, request.command_id),
                lambda table: self._app.decider.move(
                    table, principal, request.seat, request.action, request.expected_version
                ),
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
    def _seat_shown(self, table: Table, seat: int | None, context: Context) -> int | None:
        """The seat whose cards the caller asked to see (None: a spectator's view), which
        must be their own."""
        if seat is None:
            return None
        return viewer_seat(table, seat, self._principal(context))

    async def GetTable(
        self, request: table_pb2.GetTableRequest, context: Context
    ) -> table_pb2.GetTableResponse:
        async def work() -> table_pb2.GetTableResponse:
            table = await self._app.read(check_table_id(request.table_id), request.min_version)
            seat = self._seat_shown(
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

        async def start() -> AsyncGenerator[table_pb2.WatchTurnsResponse, None]:
            table_id = check_table_id(request.table_id)
            table = await self._app.read(table_id)
            principal = self._principal(context)
            seat = viewer_seat(table, request.seat, principal)
            return turns(self._app, self._changes, table_id, seat, principal, request.after_version)

        async for turn in self._watched(context, start):
            yield turn

    async def WatchTable(
        self, request: table_pb2.WatchTableRequest, context: Context
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        """History after ``from_version``, then each new batch as it lands, redacted (see
        ``table_stream``); within the watch-stream quotas."""

        async def start() -> AsyncGenerator[table_pb2.WatchTableResponse, None]:
            table_id = check_table_id(request.table_id)
            table = await self._app.read(table_id)
            principal, seat = None, None
            if request.HasField("seat"):
                principal = self._principal(context)
                seat = viewer_seat(table, request.seat, principal)
            return batches(
                self._app, self._changes, table_id, seat, principal, request.from_version
            )

        async for reply in self._watched(context, start):
            yield reply

    async def _watched(
        self, context: Context, start: Callable[[], Awaitable[AsyncGenerator[Reply, None]]]
    ) -> AsyncIterator[Reply]:
        """The stream ``start`` opens, while it holds one of the caller's watch streams
        (quotas.py); a typed error ends it with its status code."""
        if self._quotas.enabled:
            self._quota_checked("watch_streams")
        try:
            release = self._hold_watch(context)
        except TableError as error:
            await refuse(context, error, self._metrics)
        try:
            stream = await start()
            async with contextlib.aclosing(stream):
                async for reply in stream:
                    yield reply
        except TableError as error:
            await refuse(context, error, None)
        finally:
            release()

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
            record = await self._app.game_record(check_table_id(request.table_id))
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
