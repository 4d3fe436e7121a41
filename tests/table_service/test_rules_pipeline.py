"""The table service's stream to the rules service: shared messages, errors, breaks, fallback.

Each test runs a real rules server whose servicer is the production one with one method
changed or counted, and drives it through :class:`PipelinedRules` over a real channel.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from cardtable.platform import pipeline_client
from cardtable.platform.grpc_server import Service, start_server
from cardtable.rules_service.main import SERVICE_NAME
from cardtable.rules_service.servicer import RulesServicer
from cardtable.table_service.errors import (
    BadRequestError,
    DependencyUnavailableError,
    RuleViolationError,
)
from cardtable.table_service.rules_pipeline import PipelinedRules
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc
from tests.table_service.local_rules import LocalRules

Context = grpc.aio.ServicerContext[Any, Any]


class CountingServicer(RulesServicer):
    """The production servicer, counting what arrives."""

    def __init__(self) -> None:
        self.calls_per_message: list[int] = []
        self.unary_views = 0

    async def Pipeline(
        self, request_iterator: AsyncIterator[rules_pb2.PipelineRequest], context: Context
    ) -> AsyncIterator[rules_pb2.PipelineResponse]:
        async def counted() -> AsyncIterator[rules_pb2.PipelineRequest]:
            async for request in request_iterator:
                self.calls_per_message.append(len(request.calls))
                yield request

        async for response in super().Pipeline(counted(), context):
            yield response

    async def GetView(
        self, request: rules_pb2.GetViewRequest, context: Context
    ) -> rules_pb2.GetViewResponse:
        self.unary_views += 1
        return await super().GetView(request, context)


class OldServicer(CountingServicer):
    """A rules service from before ``Pipeline``: its server does not know the method."""


class _WithoutPipeline:
    """Passes the generated registration on to a server, leaving ``Pipeline`` out.

    A server that never registered the method answers UNIMPLEMENTED itself; the generated
    base's ``NotImplementedError`` instead races the stream's first write and can reach the
    client as INTERNAL.
    """

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """The registered handlers below are enough; the generic copy would bring Pipeline back."""

    def add_registered_method_handlers(self, name: str, handlers: dict[str, Any]) -> None:
        kept = {method: handler for method, handler in handlers.items() if method != "Pipeline"}
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, kept),))


def add_without_pipeline(servicer: RulesServicer, server: grpc.aio.Server) -> None:
    """Register every rules method but ``Pipeline``, as a server built before it would."""
    rules_pb2_grpc.add_RulesServiceServicer_to_server(servicer, _WithoutPipeline(server))


class BreakingServicer(CountingServicer):
    """Its first stream goes away after one message, unanswered; later streams work."""

    def __init__(self) -> None:
        super().__init__()
        self.streams = 0

    async def Pipeline(
        self, request_iterator: AsyncIterator[rules_pb2.PipelineRequest], context: Context
    ) -> AsyncIterator[rules_pb2.PipelineResponse]:
        self.streams += 1
        if self.streams == 1:
            async for _ in request_iterator:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        async for response in super().Pipeline(request_iterator, context):
            yield response


class SilentServicer(CountingServicer):
    """Reads the calls and never answers."""

    async def Pipeline(
        self, request_iterator: AsyncIterator[rules_pb2.PipelineRequest], context: Context
    ) -> AsyncIterator[rules_pb2.PipelineResponse]:
        async for _ in request_iterator:
            await asyncio.sleep(3600)
        yield rules_pb2.PipelineResponse()  # pragma: no cover


@asynccontextmanager
async def pipelined(
    servicer: RulesServicer, timeout_seconds: float = 5.0, linger_seconds: float = 0.0
) -> AsyncIterator[PipelinedRules]:
    add_to_server = (
        add_without_pipeline
        if isinstance(servicer, OldServicer)
        else rules_pb2_grpc.add_RulesServiceServicer_to_server
    )
    service = Service(name=SERVICE_NAME, servicer=servicer, add_to_server=add_to_server)
    server = await start_server([service], port=0, host="127.0.0.1")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    rules = PipelinedRules(channel, timeout_seconds=timeout_seconds, linger_seconds=linger_seconds)
    try:
        yield rules
    finally:
        await rules.close()
        await channel.close(None)
        await server.stop(None)


async def dealt_hearts() -> rules_pb2.DealResponse:
    local = LocalRules()
    created = await local.new_game(
        rules_pb2.NewGameRequest(
            game="hearts", players=4, options=common_pb2.GameOptions(values={"quick": "true"})
        )
    )
    deck = list(created.deck)
    random.Random(5).shuffle(deck)
    return await local.deal(rules_pb2.DealRequest(state=created.state, deck_order=deck))


async def test_calls_that_wait_together_share_messages_and_get_their_own_answers() -> None:
    dealt = await dealt_hearts()
    requests = [
        rules_pb2.GetViewRequest(state=dealt.state, seat=seat, typed_view=True)
        for seat in [0, 1, 2, 3] * 10
    ]
    servicer = CountingServicer()
    async with pipelined(servicer) as rules:
        answers = await asyncio.gather(*(rules.get_view(request) for request in requests))
    expected = [await LocalRules().get_view(request) for request in requests]
    assert answers == expected  # each its own seat's view, whatever the order of replies
    assert sum(servicer.calls_per_message) == 40
    assert max(servicer.calls_per_message) > 1
    assert servicer.unary_views == 0


@pytest.mark.parametrize(("linger_seconds", "messages"), [(0.0, [1, 1, 1]), (0.5, [1, 2])])
async def test_a_call_asked_while_the_stream_lingers_shares_the_message(
    linger_seconds: float, messages: list[int]
) -> None:
    """Calls asked 20 ms apart: each alone without a linger. With one, the first goes at once
    (no pace known yet); by the second, calls come often enough to wait for the third."""
    dealt = await dealt_hearts()
    requests = [
        rules_pb2.GetViewRequest(state=dealt.state, seat=seat, typed_view=True)
        for seat in (0, 1, 2)
    ]
    servicer = CountingServicer()
    async with pipelined(servicer, linger_seconds=linger_seconds) as rules:
        asked = []
        for request in requests:
            asked.append(asyncio.create_task(rules.get_view(request)))
            await asyncio.sleep(0.02)
        answers = await asyncio.gather(*asked)
    assert answers == [await LocalRules().get_view(request) for request in requests]
    assert servicer.calls_per_message == messages


async def test_calls_past_the_message_size_go_in_further_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dealt = await dealt_hearts()
    request = rules_pb2.GetViewRequest(state=dealt.state, seat=2, typed_view=True)
    monkeypatch.setattr(pipeline_client, "MESSAGE_BYTES", 3 * request.ByteSize())
    servicer = CountingServicer()
    async with pipelined(servicer) as rules:
        answers = await asyncio.gather(*(rules.get_view(request) for _ in range(20)))
    assert answers == [await LocalRules().get_view(request)] * 20
    assert sum(servicer.calls_per_message) == 20
    assert max(servicer.calls_per_message) <= 3 and len(servicer.calls_per_message) >= 7


async def test_refusals_keep_their_meaning_and_the_stream_goes_on() -> None:
    dealt = await dealt_hearts()
    seat = dealt.status.to_act[0]
    async with pipelined(CountingServicer()) as rules:
        with pytest.raises(RuleViolationError) as illegal:
            await rules.apply_action(
                rules_pb2.ApplyActionRequest(state=dealt.state, seat=seat, action="play 2C")
            )
        with pytest.raises(BadRequestError, match="no seat 9"):
            await rules.get_view(rules_pb2.GetViewRequest(state=dealt.state, seat=9))
        view = await rules.get_view(
            rules_pb2.GetViewRequest(state=dealt.state, seat=seat, typed_view=True)
        )
    with pytest.raises(RuleViolationError) as local:
        await LocalRules().apply_action(
            rules_pb2.ApplyActionRequest(state=dealt.state, seat=seat, action="play 2C")
        )
    assert str(illegal.value) == str(local.value)
    assert view.seat_view.hand  # the stream still answers after two refusals


async def test_a_broken_stream_fails_its_calls_as_unavailable_and_the_next_call_reopens() -> None:
    dealt = await dealt_hearts()
    request = rules_pb2.GetViewRequest(state=dealt.state, seat=0)
    servicer = BreakingServicer()
    async with pipelined(servicer) as rules:
        with pytest.raises(DependencyUnavailableError, match="going away"):
            await rules.get_view(request)
        assert await rules.get_view(request) == await LocalRules().get_view(request)
    assert servicer.streams == 2 and servicer.unary_views == 0


async def test_no_answer_in_time_is_unavailable() -> None:
    dealt = await dealt_hearts()
    async with pipelined(SilentServicer(), timeout_seconds=0.3) as rules:
        with pytest.raises(DependencyUnavailableError, match="deadline_exceeded"):
            await rules.get_view(rules_pb2.GetViewRequest(state=dealt.state, seat=0))


async def test_a_rules_service_without_the_pipeline_is_asked_with_unary_calls() -> None:
    dealt = await dealt_hearts()
    request = rules_pb2.GetViewRequest(state=dealt.state, seat=1)
    servicer = OldServicer()
    async with pipelined(servicer) as rules:
        first = await rules.get_view(request)
        second = await rules.get_view(request)
    assert first == second == await LocalRules().get_view(request)
    assert servicer.unary_views == 2 and servicer.calls_per_message == []
