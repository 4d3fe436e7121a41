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

from typing import Any

import grpc

from cardtable.platform.logging import get_logger
from cardtable.platform.pipeline_client import (
    DEFAULT_LINGER_SECONDS,
    PipelineStream,
    failed_status,
)
from cardtable.platform.tracing import outgoing_metadata
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable.table_service.rules_port import GrpcRules, error_for_status
from cardtable_api.rules.v1 import rules_pb2

_log = get_logger(__name__)


class PipelineUnsupportedError(Exception):
    """The rules service does not know ``Pipeline``: ask it with unary calls instead."""


def _failure(code: grpc.StatusCode, details: str) -> Exception:
    """What a call sees when the stream could not answer it."""
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return PipelineUnsupportedError()
    return DependencyUnavailableError(f"rules service: {code.name.lower()}: {details}")


class PipelinedRules(GrpcRules):
    """:class:`GrpcRules` with its per-move calls over one stream (see the module doc)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        timeout_seconds: float = 5.0,
        linger_seconds: float = DEFAULT_LINGER_SECONDS,
    ) -> None:
        super().__init__(channel, timeout_seconds)
        self._linger = linger_seconds
        self._pipeline: PipelineStream | None = None
        self._unary_only = False

    async def _ask(self, field: str, request: Any) -> Any:
        if self._unary_only:
            return None
        if self._pipeline is None or self._pipeline.broken:
            # No request iterator: the pipeline writes its messages with ``call.write``.
            call = self._stub.Pipeline(metadata=outgoing_metadata())  # type: ignore[call-arg]
            self._pipeline = PipelineStream(
                call, rules_pb2.PipelineRequest, self._timeout, _failure, "rules", self._linger
            )
        try:
            reply = await self._pipeline.ask(field, request)
        except PipelineUnsupportedError:
            _log.warning("the rules service has no Pipeline method: unary calls from now on")
            self._unary_only = True
            return None
        failed = failed_status(reply)
        if failed is not None:
            raise error_for_status(*failed)
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
