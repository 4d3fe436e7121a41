"""One move followed across services: its trace context reaches the event store; metrics count."""

from __future__ import annotations

import random
import uuid

import grpc
import pytest

from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, pick_action

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


async def test_trace_context_reaches_the_log_and_metrics_count(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    view = (await players[0].view(table_id, 0)).seat_view
    await players[0].stub.MakeMove(
        table_pb2.MakeMoveRequest(
            command_id=str(uuid.uuid4()),
            table_id=table_id,
            seat=0,
            action=pick_action(view, random.Random(1)),
        ),
        metadata=(*players[0].metadata, ("traceparent", TRACEPARENT)),
    )
    last = await cluster.nats.jetstream.get_last_msg(
        cluster.parts.app.store.stream, cluster.parts.app.store.subject(table_id)
    )
    assert last.headers is not None
    assert last.headers["traceparent"].split("-")[1] == TRACEPARENT.split("-")[1]

    with pytest.raises(grpc.aio.AioRpcError):
        await players[1].move(table_id, 1, "play 2C")  # still passing: a rule violation
    moves = cluster.registry.get_sample_value("cardtable_moves_total", {"game": "hearts"})
    refused = cluster.registry.get_sample_value(
        "cardtable_commands_rejected_total", {"method": "MakeMove", "reason": "rule_violation"}
    )
    assert moves == 1
    assert refused == 1
