"""PipelinedTableStub: the unary stub's shape over one Pipeline stream, against stand-in servers.

The real table service's answers over the pipeline are tested in
tests/table_service/test_pipeline.py; here the stream itself misbehaves: it breaks, it stays
silent, or it answers with a failure, and the client must say so as a unary call would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from cardtable.client.table_pipeline import PipelinedTableStub
from cardtable.platform.grpc_server import Service, start_server
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
REQUEST = table_pb2.GetTableRequest(table_id="3f1e0cbb-4f8b-4b43-9f0a-2a35a4b1c111", seat=1)
METADATA = (("authorization", "Bearer token-of-seat-1"),)


class StandIn(table_pb2_grpc.TableServiceServicer):
    """Answers GetTable with the call's token as the game; the first ``break_streams`` break."""

    def __init__(self, break_streams: int = 0, silent: bool = False) -> None:
        self.streams = 0
        self.break_streams = break_streams
        self.silent = silent

    async def Pipeline(
        self, request_iterator: AsyncIterator[table_pb2.PipelineRequest], context: Any
    ) -> AsyncIterator[table_pb2.PipelineResponse]:
        self.streams += 1
        if self.streams <= self.break_streams:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        async for request in request_iterator:
            if self.silent:
                continue
            response = table_pb2.PipelineResponse()
            for call in request.calls:
                if call.get_table.seat == 9:
                    response.replies.add(
                        id=call.id,
                        failed=table_pb2.CallFailed(
                            code=grpc.StatusCode.INVALID_ARGUMENT.value[0], message="no seat 9"
                        ),
                    )
                else:
                    response.replies.add(
                        id=call.id, get_table=table_pb2.GetTableResponse(game=call.token)
                    )
            yield response


@asynccontextmanager
async def stub_for(
    servicer: StandIn, timeout_seconds: float = 5.0
) -> AsyncIterator[PipelinedTableStub]:
    service = Service(SERVICE_NAME, servicer, table_pb2_grpc.add_TableServiceServicer_to_server)
    server = await start_server([service], port=0, host="127.0.0.1")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    stub = PipelinedTableStub(channel, timeout_seconds)
    try:
        yield stub
    finally:
        await stub.close()
        await channel.close(None)
        await server.stop(None)


async def test_the_call_carries_the_bearer_token_of_its_metadata() -> None:
    async with stub_for(StandIn()) as stub:
        reply = await stub.GetTable(REQUEST, metadata=METADATA)
    assert reply.game == "token-of-seat-1"


async def test_a_failed_call_raises_the_unary_error() -> None:
    async with stub_for(StandIn()) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetTable(table_pb2.GetTableRequest(table_id="x", seat=9), metadata=METADATA)
        assert (await stub.GetTable(REQUEST, metadata=METADATA)).game  # the stream goes on
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == "no seat 9"


async def test_a_broken_stream_fails_its_call_and_the_next_call_reopens() -> None:
    servicer = StandIn(break_streams=1)
    async with stub_for(servicer) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as broken:
            await stub.GetTable(REQUEST, metadata=METADATA)
        reply = await stub.GetTable(REQUEST, metadata=METADATA)
    assert broken.value.code() == grpc.StatusCode.UNAVAILABLE
    assert reply.game == "token-of-seat-1"
    assert servicer.streams == 2


async def test_no_answer_in_time_is_deadline_exceeded() -> None:
    async with stub_for(StandIn(silent=True), timeout_seconds=0.3) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as late:
            await stub.GetTable(REQUEST, metadata=METADATA)
    assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
