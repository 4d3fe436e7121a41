"""A creator sits as the table is made: one batch, so no fill timer can take the seat first."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, Player

FILL_AT_ONCE = events_pb2.TableSettings(fill_with_bots=True, fill_wait_ms=0, turn_timer_ms=0)


async def stream_messages(cluster: Cluster) -> int:
    return (await cluster.nats.jetstream.stream_info(cluster.names.stream)).state.messages


async def until_running(player: Player, table_id: str, seat: int) -> None:
    for _ in range(200):
        if (await player.view(table_id, seat)).status == "running":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"table {table_id} never started")


async def test_a_creator_keeps_the_seat_however_short_the_fill_wait(cluster: Cluster) -> None:
    host = cluster.player("host")
    reply = await host.create_seated("hearts", 2, 4, {"quick": "true"}, FILL_AT_ONCE)
    assert reply.seat == 2
    assert reply.version == 1, "the table and its creator's seat are one batch"
    await until_running(host, reply.table_id, 2)
    table = await host.view(reply.table_id, 2)
    kinds = [seat.kind for seat in table.seats]
    assert table.seats[2].player_id == "host" and kinds[2] == events_pb2.PLAYER_KIND_PERSON
    assert kinds[:2] + kinds[3:] == [events_pb2.PLAYER_KIND_BOT] * 3
    assert table.seat_view.hand, "the creator sees their own cards"


async def test_a_retry_gets_the_same_table_and_seat(cluster: Cluster) -> None:
    host = cluster.player("host")
    command_id = str(uuid.uuid4())
    first = await host.create_seated("whist", 1, 4, command_id=command_id)
    again = await host.create_seated("whist", 1, 4, command_id=command_id)
    assert (again.table_id, again.seat, again.version) == (first.table_id, 1, first.version)
    table = await host.view(first.table_id, 1)
    assert [seat.player_id for seat in table.seats] == ["", "host", "", ""]
    # the lobby counts the seat (the seat quota reads that count)
    for _ in range(100):
        listing = await host.stub.ListTables(table_pb2.ListTablesRequest(game="whist"))
        entry = [summary for summary in listing.tables if summary.table_id == first.table_id]
        if entry and entry[0].seats_taken == 1:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the lobby never counted the creator's seat")


@pytest.mark.parametrize("seat", [4, 9])
async def test_a_seat_the_table_does_not_have_is_refused_and_nothing_is_written(
    cluster: Cluster, seat: int
) -> None:
    host = cluster.player("host")
    before = await stream_messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await host.create_seated("hearts", seat, 4, {"quick": "true"})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"there is no seat {seat} at this table" in (refused.value.details() or "")
    assert await stream_messages(cluster) == before
