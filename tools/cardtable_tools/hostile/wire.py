"""Sending one hostile request over a raw channel, and reading back how it was answered.

Requests travel as bytes through generic channel calls (see ``calls``). An answer keeps the
trailing metadata as well as the status: a quota's refusal says in it when to retry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardtable_api.rules.v1 import rules_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.hostile.calls import RULES_SERVICE, TABLE_SERVICE, HostileRequest, Metadata

CALL_TIMEOUT_SECONDS = 20.0
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
#: What each service's ``Pipeline`` answers with.
PIPELINE_RESPONSES: dict[
    str, type[rules_pb2.PipelineResponse] | type[table_pb2.PipelineResponse]
] = {
    RULES_SERVICE: rules_pb2.PipelineResponse,
    TABLE_SERVICE: table_pb2.PipelineResponse,
}


@dataclass(frozen=True)
class Answer:
    """How a call ended: its status, the details and the trailing metadata."""

    code: grpc.StatusCode
    details: str = ""
    trailers: Metadata = ()

    def trailer(self, key: str) -> str | None:
        """The trailing metadata entry ``key``, if the server sent one."""
        return next((value for name, value in self.trailers if name == key), None)


def refused(error: grpc.aio.AioRpcError) -> Answer:
    """The answer an ``AioRpcError`` stands for."""
    return Answer(error.code(), error.details() or "", _metadata(error.trailing_metadata()))


def _metadata(entries: Iterable[Any] | None) -> Metadata:
    """Trailing metadata as (key, text) pairs; binary entries are left out."""
    return tuple((str(key), value) for key, value in (entries or ()) if isinstance(value, str))


async def send(channel: grpc.aio.Channel, request: HostileRequest) -> Answer:
    """The answer to one raw call (a stream's first message means OK)."""
    try:
        if request.pipelined:
            return await _send_pipelined(channel, request)
        if request.streaming:
            call = channel.unary_stream(request.path, None, None)(
                request.payload, metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
            )
            try:
                async for _ in call:
                    break
            finally:
                call.cancel()
            return Answer(grpc.StatusCode.OK)
        unary = channel.unary_unary(request.path, None, None)(
            request.payload, metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
        )
        await unary
        return Answer(grpc.StatusCode.OK, trailers=_metadata(await unary.trailing_metadata()))
    except grpc.aio.AioRpcError as error:
        return refused(error)


async def _send_pipelined(channel: grpc.aio.Channel, request: HostileRequest) -> Answer:
    """One ``Pipeline`` message; its call's status is the status of its reply (a pipelined
    reply carries a status and details, no metadata of its own)."""
    call = channel.stream_stream(request.path, None, None)(  # type: ignore[call-arg]
        metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
    )
    try:
        await call.write(request.payload)
        await call.done_writing()
        answer = await call.read()
        if not isinstance(answer, bytes):  # grpc.aio.EOF: the stream ended without a reply
            return Answer(await call.code(), await call.details())
    finally:
        call.cancel()
    replies = PIPELINE_RESPONSES[request.service].FromString(answer).replies
    if len(replies) != 1:
        return Answer(grpc.StatusCode.INTERNAL, f"{len(replies)} replies to one call")
    if replies[0].HasField("failed"):
        failed = replies[0].failed
        return Answer(_STATUS_CODES.get(failed.code, grpc.StatusCode.UNKNOWN), failed.message)
    return Answer(grpc.StatusCode.OK)


async def serving(channel: grpc.aio.Channel) -> str | None:
    """None when the server answers SERVING, else what went wrong."""
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
    except grpc.aio.AioRpcError as error:
        return f"health check failed: {error.code().name} {error.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"health status {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None
