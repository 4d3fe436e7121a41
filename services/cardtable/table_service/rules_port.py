"""The table service's only way to ask game questions: the rules service, behind a port.

:class:`GrpcRules` is what production uses; the tests' ``LocalRules`` answers the same requests
in-process through the rules service's own handlers (tests/table_service/local_rules.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import grpc

from cardtable.platform.tracing import outgoing_metadata
from cardtable.table_service.errors import (
    BadRequestError,
    DependencyUnavailableError,
    GameStateLostError,
    RuleViolationError,
)
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc

Reply = TypeVar("Reply")

#: The encoding the table service asks its game states in when they come as snapshots (a
#: rebuilt or finished game): MessagePack, smaller and faster to read than JSON.
SNAPSHOT_ENCODING = rules_pb2.SNAPSHOT_ENCODING_MSGPACK


class RulesPort(Protocol):
    async def list_games(self) -> rules_pb2.ListGamesResponse: ...
    async def new_game(self, request: rules_pb2.NewGameRequest) -> rules_pb2.NewGameResponse: ...
    async def deal(self, request: rules_pb2.DealRequest) -> rules_pb2.DealResponse: ...
    async def apply_action(
        self, request: rules_pb2.ApplyActionRequest
    ) -> rules_pb2.ApplyActionResponse: ...
    async def legal_actions(
        self, request: rules_pb2.LegalActionsRequest
    ) -> rules_pb2.LegalActionsResponse: ...
    async def get_view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse: ...
    async def rebuild(self, request: rules_pb2.RebuildRequest) -> rules_pb2.RebuildResponse: ...


class GrpcRules:
    """The rules service over gRPC; its status codes become the table service's errors."""

    def __init__(self, channel: grpc.aio.Channel, timeout_seconds: float = 5.0) -> None:
        self._stub = rules_pb2_grpc.RulesServiceStub(channel)
        self._timeout = timeout_seconds

    async def _call(self, method: Callable[..., object], request: object) -> object:
        try:
            return await method(  # type: ignore[misc]
                request, timeout=self._timeout, metadata=outgoing_metadata()
            )
        except grpc.aio.AioRpcError as error:
            raise error_for_status(error.code(), error.details() or "") from None

    async def list_games(self) -> rules_pb2.ListGamesResponse:
        reply = await self._call(self._stub.ListGames, rules_pb2.ListGamesRequest())
        assert isinstance(reply, rules_pb2.ListGamesResponse)
        return reply

    async def new_game(self, request: rules_pb2.NewGameRequest) -> rules_pb2.NewGameResponse:
        reply = await self._call(self._stub.NewGame, request)
        assert isinstance(reply, rules_pb2.NewGameResponse)
        return reply

    async def deal(self, request: rules_pb2.DealRequest) -> rules_pb2.DealResponse:
        reply = await self._call(self._stub.Deal, request)
        assert isinstance(reply, rules_pb2.DealResponse)
        return reply

    async def apply_action(
        self, request: rules_pb2.ApplyActionRequest
    ) -> rules_pb2.ApplyActionResponse:
        reply = await self._call(self._stub.ApplyAction, request)
        assert isinstance(reply, rules_pb2.ApplyActionResponse)
        return reply

    async def legal_actions(
        self, request: rules_pb2.LegalActionsRequest
    ) -> rules_pb2.LegalActionsResponse:
        reply = await self._call(self._stub.LegalActions, request)
        assert isinstance(reply, rules_pb2.LegalActionsResponse)
        return reply

    async def get_view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        reply = await self._call(self._stub.GetView, request)
        assert isinstance(reply, rules_pb2.GetViewResponse)
        return reply

    async def rebuild(self, request: rules_pb2.RebuildRequest) -> rules_pb2.RebuildResponse:
        reply = await self._call(self._stub.Rebuild, request)
        assert isinstance(reply, rules_pb2.RebuildResponse)
        return reply


def error_for_status(code: grpc.StatusCode, details: str) -> Exception:
    """The table service's error for a rules service status (its codes are the contract)."""
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return RuleViolationError(details)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return BadRequestError(details)
    if code == grpc.StatusCode.NOT_FOUND:
        return GameStateLostError(f"rules service: {details}")
    return DependencyUnavailableError(f"rules service: {code.name.lower()}: {details}")
