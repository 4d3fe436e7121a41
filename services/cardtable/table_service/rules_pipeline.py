"""The rules service's hot calls over one long-lived stream (``RulesService.Pipeline``).

Every move asks the rules service once. As a unary call that costs a whole gRPC call on both
sides (its own HTTP/2 stream, headers and trailers, the server's interceptors); over one open
stream it costs a message, and the calls of many tables that wait at the same moment share
one message. Deal, ApplyAction, LegalActions and GetView go this way; the rare calls (list the
games, a new game, a rebuild with its own long deadline) stay unary.

The calls are questions without side effects, so a broken stream loses nothing: the calls in
flight fail with UNAVAILABLE, as unary calls to a server that went away would, and the next
call opens a new stream. A rules service without the method (an older version during a rolling
upgrade) answers UNIMPLEMENTED; from then on every call is unary again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

import grpc

from cardtable.platform.logging import get_logger
from cardtable.platform.tracing import outgoing_metadata
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable.table_service.rules_port import GrpcRules, error_for_status
from cardtable_api.rules.v1 import rules_pb2

_log = get_logger(__name__)
#: A message holds calls up to about this many bytes (the rules server refuses more than
#: 4 MiB in one message, and one state may take 256 KiB): more calls go in the next message.
MESSAGE_BYTES = 1024 * 1024
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


class PipelineUnsupportedError(Exception):
    """The rules service does not know ``Pipeline``: ask it with unary calls instead."""


class _Pipeline:
    """One open ``Pipeline`` stream: a writer task sends what waits, a reader task answers."""

    def __init__(self, call: Any, timeout_seconds: float) -> None:
        self._call = call
        self._timeout = timeout_seconds
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[rules_pb2.PipelinedReply]] = {}
        # Messages waiting to be written, each kept under MESSAGE_BYTES; the last one fills.
        self._outbox: list[rules_pb2.PipelineRequest] = []
        self._outbox_bytes = 0
        self._wakeup = asyncio.Event()
        self.broken = False
        self._tasks = (
            asyncio.create_task(self._write(), name="rules-pipeline-write"),
            asyncio.create_task(self._read(), name="rules-pipeline-read"),
        )

    async def ask(self, field: str, request: Any) -> rules_pb2.PipelinedReply:
        call_id = next(self._ids)
        future: asyncio.Future[rules_pb2.PipelinedReply] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting[call_id] = future
        size = request.ByteSize()
        if not self._outbox or self._outbox_bytes + size > MESSAGE_BYTES:
            self._outbox.append(rules_pb2.PipelineRequest())
            self._outbox_bytes = 0
        call = self._outbox[-1].calls.add(id=call_id)
        getattr(call, field).CopyFrom(request)
        self._outbox_bytes += size
        self._wakeup.set()
        try:
            async with asyncio.timeout(self._timeout):
                return await future
        except TimeoutError:
            raise DependencyUnavailableError(
                f"rules service: deadline_exceeded: no answer within {self._timeout:g}s"
            ) from None
        finally:
            self._waiting.pop(call_id, None)

    async def _write(self) -> None:
        try:
            while not self.broken:
                await self._wakeup.wait()
                self._wakeup.clear()
                # Calls asked while these writes are on their way gather in the next message.
                sending, self._outbox = self._outbox, []
                for message in sending:
                    await self._call.write(message)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._break(error)

    async def _read(self) -> None:
        try:
            async for response in self._call:
                for reply in response.replies:
                    future = self._waiting.get(reply.id)
                    if future is not None and not future.done():
                        future.set_result(reply)
            self._break(ConnectionError("the rules service ended the pipeline"))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._break(error)

    def _break(self, error: Exception) -> None:
        """Fail every call in flight; the next call opens a new stream."""
        if self.broken:
            return
        self.broken = True
        # The calls in flight were fine: whatever ended the stream, they could not be answered.
        if isinstance(error, grpc.aio.AioRpcError):
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                failure: Exception = PipelineUnsupportedError()
            else:
                failure = DependencyUnavailableError(
                    f"rules service: {error.code().name.lower()}: {error.details() or ''}"
                )
        else:
            failure = DependencyUnavailableError(f"rules service: pipeline broke: {error!r}")
        _log.warning("rules pipeline broke", extra={"error": repr(error)})
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(failure)
        self._waiting.clear()
        self._call.cancel()
        self._wakeup.set()  # lets the writer see it is broken and end

    async def close(self) -> None:
        self.broken = True
        self._call.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


class PipelinedRules(GrpcRules):
    """:class:`GrpcRules` with its per-move calls over one stream (see the module doc)."""

    def __init__(self, channel: grpc.aio.Channel, timeout_seconds: float = 5.0) -> None:
        super().__init__(channel, timeout_seconds)
        self._pipeline: _Pipeline | None = None
        self._unary_only = False

    async def _ask(self, field: str, request: Any) -> Any:
        if self._unary_only:
            return None
        if self._pipeline is None or self._pipeline.broken:
            # No request iterator: the pipeline writes its messages with ``call.write``.
            call = self._stub.Pipeline(metadata=outgoing_metadata())  # type: ignore[call-arg]
            self._pipeline = _Pipeline(call, self._timeout)
        try:
            reply = await self._pipeline.ask(field, request)
        except PipelineUnsupportedError:
            _log.warning("the rules service has no Pipeline method: unary calls from now on")
            self._unary_only = True
            return None
        if reply.HasField("failed"):
            code = _STATUS_CODES.get(reply.failed.code, grpc.StatusCode.UNKNOWN)
            raise error_for_status(code, reply.failed.message)
        return getattr(reply, field)

    async def deal(self, request: rules_pb2.DealRequest) -> rules_pb2.DealResponse:
        reply = await self._ask("deal", request)
        return reply if reply is not None else await super().deal(request)

    async def apply_action(
        self, request: rules_pb2.ApplyActionRequest
    ) -> rules_pb2.ApplyActionResponse:
        reply = await self._ask("apply_action", request)
        return reply if reply is not None else await super().apply_action(request)

    async def legal_actions(
        self, request: rules_pb2.LegalActionsRequest
    ) -> rules_pb2.LegalActionsResponse:
        reply = await self._ask("legal_actions", request)
        return reply if reply is not None else await super().legal_actions(request)

    async def get_view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        reply = await self._ask("get_view", request)
        return reply if reply is not None else await super().get_view(request)

    async def close(self) -> None:
        """End the stream and its tasks (at shutdown, before the channel closes)."""
        if self._pipeline is not None:
            await self._pipeline.close()
            self._pipeline = None
