"""A client of ``TableService.Pipeline`` with the unary stub's shape, for many players at once.

A backend that serves many players (a game front end, a bot fleet, the load benchmark) calls
``CreateTable``, ``JoinTable``, ``GetTable`` and ``MakeMove`` on a :class:`PipelinedTableStub`
exactly as on the generated stub, with each player's ``authorization`` metadata. The calls
of all its players go over one stream, and the calls waiting at the same moment share a
message; see ``cardtable.table_service.pipeline`` for why that is cheaper.

A refused call raises :class:`grpc.aio.AioRpcError` with the status the unary method would
have given, so callers handle both the same way. When the stream breaks, the calls in flight
fail with its status (UNAVAILABLE when it simply went away) and the next call opens a new
stream; retry a command with the same command id, as after any unclear outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from cardtable.platform.pipeline_client import (
    DEFAULT_LINGER_SECONDS,
    PipelineStream,
    failed_status,
)
from cardtable.platform.tokens import TokenRefusedError, bearer_token
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

Metadata = Sequence[tuple[str, str]]


def rpc_error(code: grpc.StatusCode, details: str, retry_after_ms: int = 0) -> grpc.aio.AioRpcError:
    """The error a unary call with that status would have raised, with a quota's
    ``retry-after-ms`` in its trailing metadata as the unary call has it."""
    trailing = (
        grpc.aio.Metadata(("retry-after-ms", str(retry_after_ms)))
        if retry_after_ms
        else grpc.aio.Metadata()
    )
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, details, None)


def _token(metadata: Metadata) -> str:
    """The bearer token of ``metadata``, read as the service reads it ("" if there is none or
    it is malformed: the server then answers the call UNAUTHENTICATED)."""
    try:
        return bearer_token(metadata)
    except TokenRefusedError:
        return ""


class PipelinedTableStub:
    """``CreateTable``, ``JoinTable``, ``GetTable`` and ``MakeMove`` over one ``Pipeline``
    stream (see the module doc)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        timeout_seconds: float = 10.0,
        linger_seconds: float = DEFAULT_LINGER_SECONDS,
    ) -> None:
        """``linger_seconds``: how long a call waits for others to share its message."""
        self._stub = table_pb2_grpc.TableServiceStub(channel)
        self._timeout = timeout_seconds
        self._linger = linger_seconds
        self._stream: PipelineStream | None = None

    async def _ask(self, field: str, request: Any, metadata: Metadata) -> Any:
        if self._stream is None or self._stream.broken:
            # No request iterator: the stream writes its messages with ``call.write``.
            call = self._stub.Pipeline()  # type: ignore[call-arg]
            self._stream = PipelineStream(
                call, table_pb2.PipelineRequest, self._timeout, rpc_error, "table", self._linger
            )
        reply = await self._stream.ask(field, request, token=_token(metadata))
        failed = failed_status(reply)
        if failed is not None:
            raise rpc_error(*failed, reply.failed.retry_after_ms)
        return getattr(reply, field)

    async def CreateTable(  # noqa: N802 - the generated stub's name, so either can be used
        self, request: table_pb2.CreateTableRequest, metadata: Metadata = ()
    ) -> table_pb2.CreateTableResponse:
        reply: table_pb2.CreateTableResponse = await self._ask("create_table", request, metadata)
        return reply

    async def JoinTable(  # noqa: N802 - the generated stub's name, so either can be used
        self, request: table_pb2.JoinTableRequest, metadata: Metadata = ()
    ) -> table_pb2.JoinTableResponse:
        reply: table_pb2.JoinTableResponse = await self._ask("join_table", request, metadata)
        return reply

    async def GetTable(  # noqa: N802 - the generated stub's name, so either can be used
        self, request: table_pb2.GetTableRequest, metadata: Metadata = ()
    ) -> table_pb2.GetTableResponse:
        reply: table_pb2.GetTableResponse = await self._ask("get_table", request, metadata)
        return reply

    async def MakeMove(  # noqa: N802 - the generated stub's name, so either can be used
        self, request: table_pb2.MakeMoveRequest, metadata: Metadata = ()
    ) -> table_pb2.MakeMoveResponse:
        reply: table_pb2.MakeMoveResponse = await self._ask("make_move", request, metadata)
        return reply

    async def close(self) -> None:
        """End the stream and its tasks (before the channel closes)."""
        if self._stream is not None:
            await self._stream.close()
            self._stream = None
