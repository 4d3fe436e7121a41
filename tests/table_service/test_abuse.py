"""Attacks a public card site meets, replayed against the real table service: each refused with
the right status and a sentence, and nothing appended to the log."""

from __future__ import annotations

import random
import uuid

import grpc
import pytest

from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, pick_action

INVALID = grpc.StatusCode.INVALID_ARGUMENT


async def _messages(cluster: Cluster) -> int:
    return (await cluster.nats.jetstream.stream_info(cluster.names.stream)).state.messages


def _create(settings: events_pb2.TableSettings, **fields: object) -> table_pb2.CreateTableRequest:
    return table_pb2.CreateTableRequest(
        command_id=str(uuid.uuid4()),
        game="hearts",
        settings=settings,
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("request_", "complaint"),
    [
        (_create(events_pb2.TableSettings(turn_timer_ms=1)), "turn_timer_ms is 0 (no timer) or"),
        (_create(events_pb2.TableSettings(turn_timer_ms=3_600_000)), "not 3,600,000"),
        (_create(events_pb2.TableSettings(fill_wait_ms=86_400_000)), "fill_wait_ms is at most"),
        (
            _create(events_pb2.TableSettings(bot_strategy="genius")),
            "bot_strategy is one of easy, normal, hard, random, rules, search, not 'genius'",
        ),
        (_create(events_pb2.TableSettings(bot_strategy="HARD")), "not 'HARD'"),
        (_create(events_pb2.TableSettings(bot_strategy="x" * 900_000)), "a command is at most"),
        (_create(events_pb2.TableSettings(bot_strategy="x" * 3_900_000)), "a command is at most"),
        (
            _create(
                events_pb2.TableSettings(),
                options=common_pb2.GameOptions(values={"quick": "t" * 100}),
            ),
            "at most 32 characters",
        ),
        (
            _create(
                events_pb2.TableSettings(), options=common_pb2.GameOptions(values={"x" * 50: "1"})
            ),
            "unknown option",
        ),
    ],
)
async def test_settings_out_of_bounds_are_refused_and_nothing_is_stored(
    cluster: Cluster, request_: table_pb2.CreateTableRequest, complaint: str
) -> None:
    player = cluster.player("mallory")
    before = await _messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await player.stub.CreateTable(request_, metadata=player.metadata)
    assert refused.value.code() == INVALID
    assert complaint in (refused.value.details() or "")
    assert len(refused.value.details() or "") < 300
    assert await _messages(cluster) == before


async def test_a_command_id_reused_for_another_command_is_refused(cluster: Cluster) -> None:
    host = cluster.player("host")
    request = _create(events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False))
    first = await host.stub.CreateTable(request, metadata=host.metadata)
    again = await host.stub.CreateTable(request, metadata=host.metadata)
    assert again.table_id == first.table_id  # the same command: the same answer
    before = await _messages(cluster)
    other = table_pb2.CreateTableRequest()
    other.CopyFrom(request)
    other.game = "belote"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await host.stub.CreateTable(other, metadata=host.metadata)
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "was already used for a different command" in (refused.value.details() or "")

    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(first.table_id, seat)
    view = (await players[0].view(first.table_id, 0)).seat_view
    rng = random.Random(5)
    passes = [pick_action(view, rng)]
    while (other_pass := pick_action(view, rng)) == passes[0]:
        pass
    passes.append(other_pass)
    move = table_pb2.MakeMoveRequest(
        command_id="m1", table_id=first.table_id, seat=0, action=passes[0]
    )
    await players[0].stub.MakeMove(move, metadata=players[0].metadata)
    await players[0].stub.MakeMove(move, metadata=players[0].metadata)  # a retry: fine
    before = await _messages(cluster)
    move.action = passes[1]
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await players[0].stub.MakeMove(move, metadata=players[0].metadata)
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "'m1' was already used" in (refused.value.details() or "")
    assert await _messages(cluster) == before


async def test_two_authorization_headers_are_unauthenticated(cluster: Cluster) -> None:
    alice, bob = cluster.player("alice"), cluster.player("bob")
    before = await _messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await alice.stub.CreateTable(
            _create(events_pb2.TableSettings()), metadata=(*alice.metadata, *bob.metadata)
        )
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "one authorization header" in (refused.value.details() or "")
    assert await _messages(cluster) == before
