"""Conflicting and repeated commands against real JetStream: one wins, nothing doubles."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest

from cardtable.engine.record import load_record, verify_record
from cardtable.eventlog.records import record_from_batches
from cardtable.table_service.application import caller_command_id
from cardtable.table_service.quotas import QuotaSettings
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    Cluster,
    Player,
    pick_action,
    running_table_service,
)

CLIENTS = 50


@pytest.fixture
async def cluster(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> AsyncIterator[Cluster]:
    """The table service with its per-player rate limit lifted: these tests fire dozens of
    one player's commands at once on purpose (the limit has its own tests)."""
    async with running_table_service(
        nats_url, nats_namespace.prefix, rules_address, quotas=QuotaSettings(enabled=False)
    ) as running:
        yield running


async def _log(cluster: Cluster, table_id: str) -> list[events_pb2.EventBatch]:
    """The table's batches as the servers see them: sealed events opened."""
    security = cluster.parts.app.security
    return [
        security.opened(table_id, stored.batch)
        async for stored in cluster.parts.app.store.read(table_id)
    ]


def _assert_no_gap_no_duplicate(batches: list[events_pb2.EventBatch]) -> None:
    assert [batch.table_version for batch in batches] == list(range(1, len(batches) + 1))
    command_ids = [batch.command_id for batch in batches]
    assert len(command_ids) == len(set(command_ids))


async def _hearts_table(cluster: Cluster) -> tuple[str, dict[int, Player]]:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    return table_id, players


async def test_fifty_concurrent_clients_on_one_table(cluster: Cluster) -> None:
    rng = random.Random(50)
    table_id, players = await _hearts_table(cluster)
    # each seat gets many independent clients (own channels) with its own token
    clients = {
        seat: [
            Player(cluster.stub(), players[seat].token, players[seat].player_id)
            for _ in range(CLIENTS // 4 + 1)
        ]
        for seat in players
    }
    succeeded = 0
    for _round in range(12):
        summary = await players[0].view(table_id, None)
        to_act = list(summary.game_status.to_act)
        attempts = []
        for index in range(CLIENTS):
            seat = rng.randrange(4)
            client = clients[seat][index % len(clients[seat])]
            view = (await client.view(table_id, seat)).seat_view
            action = pick_action(view, rng) if seat in to_act else "play 2C"
            attempts.append(client.move(table_id, seat, action))
        results = await asyncio.gather(*attempts, return_exceptions=True)
        wins = [result for result in results if not isinstance(result, BaseException)]
        for failure in results:
            if isinstance(failure, BaseException):
                assert isinstance(failure, grpc.aio.AioRpcError)
                assert failure.code() in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.ABORTED,
                ), failure.details()
        # a move wins only if it is legal when applied: the first one, then (rarely) another
        # that the new state allows, e.g. the same seat leading after winning the trick
        assert wins
        succeeded += len(wins)
    batches = await _log(cluster, table_id)
    _assert_no_gap_no_duplicate(batches)
    actions = [
        event for batch in batches for event in batch.events if event.HasField("action_taken")
    ]
    assert len(actions) == succeeded
    # every logged move was legal when it was applied: the engine replays the log cleanly
    report = verify_record(load_record(record_from_batches(table_id, batches)))
    assert report.ok, report.problem


async def test_a_retried_command_makes_one_event(cluster: Cluster) -> None:
    table_id, players = await _hearts_table(cluster)
    view = (await players[0].view(table_id, 0)).seat_view
    action = pick_action(view, random.Random(1))
    command_id = str(uuid.uuid4())
    first = await players[0].move(table_id, 0, action, command_id)
    again = await players[0].move(table_id, 0, action, command_id)
    assert again.version == first.version
    concurrent = await asyncio.gather(
        *(players[0].move(table_id, 0, action, command_id) for _ in range(10))
    )
    assert {reply.version for reply in concurrent} == {first.version}
    batches = await _log(cluster, table_id)
    _assert_no_gap_no_duplicate(batches)
    stored_id = caller_command_id(players[0].player_id, command_id)
    assert sum(1 for batch in batches if batch.command_id == stored_id) == 1


async def test_a_command_id_is_its_callers_own(cluster: Cluster) -> None:
    """Another caller's command id is a new command of theirs, not an earlier one's answer."""
    table_id, players = await _hearts_table(cluster)
    rng = random.Random(8)
    first = await players[0].move(
        table_id, 0, pick_action((await players[0].view(table_id, 0)).seat_view, rng), "shared"
    )
    stranger = cluster.player("stranger")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stranger.move(table_id, 0, "pass 2C 3C 4C", "shared")
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    second = await players[1].move(
        table_id, 1, pick_action((await players[1].view(table_id, 1)).seat_view, rng), "shared"
    )
    assert second.version == first.version + 1  # applied, not taken for seat 0's move
    batches = await _log(cluster, table_id)
    assert [batch.command_id for batch in batches[-2:]] == [
        caller_command_id("p0", "shared"),
        caller_command_id("p1", "shared"),
    ]


async def test_same_command_id_on_two_tables_is_two_commands(cluster: Cluster) -> None:
    host = cluster.player("host")
    first = await host.create("hearts", 4, {"quick": "true"})
    second = await host.create("hearts", 4, {"quick": "true"})
    for table_id in (first, second):
        await host.stub.JoinTable(
            table_pb2.JoinTableRequest(command_id="same-id", table_id=table_id),
            metadata=host.metadata,
        )
    for table_id in (first, second):
        seats = (await host.view(table_id, None)).seats
        assert seats[0].player_id == "host"


async def test_views_racing_moves_never_fold_a_batch_twice(cluster: Cluster) -> None:
    """GetTable calls overlapping MakeMove calls on one table: each move counts once."""
    table_id, players = await _hearts_table(cluster)
    rng = random.Random(9)
    moves = 0
    for _ in range(30):
        summary = await players[0].view(table_id, None)
        seat = rng.choice(list(summary.game_status.to_act))
        view = (await players[seat].view(table_id, seat)).seat_view
        spectators = [players[0].view(table_id, None) for _ in range(8)]
        results = await asyncio.gather(
            players[seat].move(table_id, seat, pick_action(view, rng)), *spectators
        )
        assert results[0].version > 0
        moves += 1
    table = await cluster.parts.app.read(table_id)
    assert table.state.turn == moves
    assert table.state.version == len(await _log(cluster, table_id))
