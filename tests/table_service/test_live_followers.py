"""Live followers see only stored batches: an append JetStream refused is not an event.

A core subscriber on a table's own subject also receives the loser of a conflicting append.
``WatchTable`` once passed such a message on as the table's next batch and then skipped the
real one of the same version, so a computer player waiting for that batch slept through its
turn. The stream now republishes stored messages, and followers listen there.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from nats.aio.msg import Msg
from nats.js import api
from nats.js.errors import APIError

from cardtable.eventlog.store import SEQUENCE_HEADER, WRONG_LAST_SEQUENCE, EventStore
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    Cluster,
    pick_action,
    running_rules,
    running_table_service,
)


async def test_a_refused_append_never_reaches_a_watch_stream(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    summary = await host.view(table_id, None)
    seat = summary.game_status.to_act[0]
    call = players[seat].stub.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, seat=seat, from_version=summary.version),
        metadata=players[seat].metadata,
    )
    try:
        # The stream has started (its catch-up read is done) once the first live batch is
        # announced; a forged losing append, as another replica's would look, comes first.
        forged = events_pb2.EventBatch(
            table_id=table_id,
            command_id="the-loser-of-a-conflict",
            table_version=summary.version + 1,
        )
        await asyncio.sleep(0.2)
        with pytest.raises(APIError) as refused:
            await cluster.nats.jetstream.publish(
                cluster.parts.app.store.subject(table_id),
                forged.SerializeToString(),
                headers={"Nats-Expected-Last-Subject-Sequence": "0"},
            )
        assert refused.value.err_code == WRONG_LAST_SEQUENCE
        view = (await players[seat].view(table_id, seat)).seat_view
        action = pick_action(view, random.Random(3))
        move = await players[seat].move(table_id, seat, action)
        response = await asyncio.wait_for(call.read(), 5)
    finally:
        call.cancel()
    assert response.version == summary.version + 1 == move.version
    taken = [event.action_taken for event in response.events if event.HasField("action_taken")]
    assert [(taken_action.seat, taken_action.action) for taken_action in taken][:1] == [
        (seat, action)
    ]
    stored = await cluster.parts.app.store.last(table_id)
    assert stored is not None and stored.batch.command_id != forged.command_id


def _old_stream_config(store: EventStore) -> api.StreamConfig:
    """The stream configuration earlier versions made: no republishing."""
    return api.StreamConfig(
        name=store.stream,
        subjects=[store.subject("*")],
        storage=api.StorageType.FILE,
        deny_delete=True,
        deny_purge=True,
    )


async def test_a_stream_made_before_republishing_is_updated_where_nats_can(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    js = nats_connection.jetstream
    store = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    await js.add_stream(_old_stream_config(store))
    await store.ensure_stream()
    await store.ensure_stream()  # once it republishes, nothing changes
    info = await js.stream_info(store.stream)
    assert info.config.deny_delete and info.config.deny_purge  # the rest is kept
    version = nats_connection.client.connected_server_version
    if (version.major, version.minor) < (2, 10):  # NATS 2.9 cannot add it to a stream
        assert not store.republishes and info.config.republish is None
        return
    assert store.republishes and info.config.republish is not None
    received: asyncio.Queue[tuple[bytes, str]] = asyncio.Queue()

    async def on_message(message: Msg) -> None:
        received.put_nowait((message.data, (message.headers or {}).get(SEQUENCE_HEADER, "")))

    subscription = await nats_connection.client.subscribe(store.stored_subject("t1"), cb=on_message)
    try:
        batch = events_pb2.EventBatch(table_id="t1", command_id="c1", table_version=1)
        appended = await store.append("t1", batch.command_id, batch.SerializeToString(), 0)
        with pytest.raises(APIError):  # a second append at the same place is refused
            await js.publish(
                store.subject("t1"),
                b"refused",
                headers={"Nats-Expected-Last-Subject-Sequence": "0"},
            )
        data, sequence = await asyncio.wait_for(received.get(), 5)
        assert events_pb2.EventBatch.FromString(data) == batch
        assert sequence == str(appended.sequence)
        await asyncio.sleep(0.2)
        assert received.empty()
    finally:
        await subscription.unsubscribe()


async def test_a_watch_on_a_stream_that_cannot_republish_still_skips_refused_appends(
    nats_url: str, nats_namespace: NatsNamespace, nats_connection: NatsConnection
) -> None:
    """What a NATS 2.9 server with a stream of an earlier version leaves: live messages are
    only hints, and the watch reads the log for what was stored."""
    store = EventStore(nats_connection.jetstream, LogNames.from_prefix(nats_namespace.prefix))
    await nats_connection.jetstream.add_stream(_old_stream_config(store))
    async with (
        running_rules() as rules_address,
        running_table_service(
            nats_url, nats_namespace.prefix, rules_address, republish=False
        ) as cluster,
    ):
        assert not cluster.parts.app.store.republishes
        await test_a_refused_append_never_reaches_a_watch_stream(cluster)
