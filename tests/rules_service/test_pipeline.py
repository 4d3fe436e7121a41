"""``RulesService.Pipeline``: the unary methods' answers and statuses, many calls per message."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import grpc
import pytest

from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.rules_service.main import rules_service
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    server: RunningServer = await start_server([rules_service()], port=0, host="127.0.0.1")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as opened:
        yield opened
    await server.stop(None)


async def _dealt_hearts(rules: rules_pb2_grpc.RulesServiceStub) -> rules_pb2.DealResponse:
    created = await rules.NewGame(
        rules_pb2.NewGameRequest(
            game="hearts", players=4, options=common_pb2.GameOptions(values={"quick": "true"})
        )
    )
    deck = list(created.deck)
    random.Random(3).shuffle(deck)
    return await rules.Deal(rules_pb2.DealRequest(state=created.state, deck_order=deck))


async def test_calls_in_one_message_get_the_unary_answers_and_statuses(
    channel: grpc.aio.Channel,
) -> None:
    rules = rules_pb2_grpc.RulesServiceStub(channel)
    dealt = await _dealt_hearts(rules)
    seat = dealt.status.to_act[0]
    legal = await rules.LegalActions(rules_pb2.LegalActionsRequest(state=dealt.state, seat=seat))
    passing = " ".join([legal.choose_cards.verb, *legal.choose_cards.cards[:3]])
    apply = rules_pb2.ApplyActionRequest(
        state=dealt.state,
        seat=seat,
        action=passing,
        include_views_of_seats_to_act=True,
        typed_views=True,
    )
    view = rules_pb2.GetViewRequest(state=dealt.state, seat=seat, typed_view=True)
    request = rules_pb2.PipelineRequest(
        calls=[
            rules_pb2.PipelinedCall(id=7, apply_action=apply),
            rules_pb2.PipelinedCall(id=8, get_view=view),
            rules_pb2.PipelinedCall(
                id=9, legal_actions=rules_pb2.LegalActionsRequest(state=dealt.state, seat=seat)
            ),
            rules_pb2.PipelinedCall(  # against the rules: FAILED_PRECONDITION, engine's words
                id=10,
                apply_action=rules_pb2.ApplyActionRequest(
                    state=dealt.state, seat=seat, action="play 2C"
                ),
            ),
            rules_pb2.PipelinedCall(  # malformed: INVALID_ARGUMENT
                id=11, get_view=rules_pb2.GetViewRequest(state=dealt.state, seat=9)
            ),
            rules_pb2.PipelinedCall(id=12),  # no request at all
        ]
    )
    stream = rules.Pipeline()
    await stream.write(request)
    response = await stream.read()
    await stream.done_writing()

    replies = {reply.id: reply for reply in response.replies}
    assert [reply.id for reply in response.replies] == [7, 8, 9, 10, 11, 12]
    assert replies[7].apply_action == await rules.ApplyAction(apply)
    assert replies[8].get_view == await rules.GetView(view)
    assert replies[9].legal_actions == legal
    with pytest.raises(grpc.aio.AioRpcError) as unary:
        await rules.ApplyAction(request.calls[3].apply_action)
    failed = {number: replies[number].failed for number in (10, 11, 12)}
    assert failed[10].code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert failed[10].message == unary.value.details()
    assert failed[11].code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "no seat 9" in failed[11].message
    assert failed[12].code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert await stream.read() == grpc.aio.EOF
    assert await stream.code() == grpc.StatusCode.OK


async def test_an_undecodable_message_ends_the_stream_with_invalid_argument(
    channel: grpc.aio.Channel,
) -> None:
    raw = channel.stream_stream(
        "/cardtable.rules.v1.RulesService/Pipeline",
        request_serializer=lambda data: data,
        response_deserializer=lambda data: data,
    )
    stream = raw()
    await stream.write(b"\xff\xff\xff\xff")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid message" in (caught.value.details() or "")
