"""TableChanges on a real NATS server: who is woken, by which messages, and for how long."""

from __future__ import annotations

import asyncio

import pytest

from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.provisioning import NatsNamespace
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable.table_service.store import ORIGIN_HEADER
from cardtable.table_service.table_changes import TableChanges
from cardtable_api.events.v1 import events_pb2


async def test_other_processes_messages_wake_watchers_and_own_ones_do_not(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    client = nats_connection.client
    subject = f"{nats_namespace.prefix}.table.t1"
    changes = TableChanges(
        client, lambda table_id: f"{nats_namespace.prefix}.table.{table_id}", "me"
    )

    async def publish(version: int, origin: str) -> None:
        batch = events_pb2.EventBatch(table_id="t1", table_version=version)
        await client.publish(subject, batch.SerializeToString(), headers={ORIGIN_HEADER: origin})
        await client.flush()
        await asyncio.sleep(0.1)

    async with changes.watching("t1") as first, changes.watching("t1") as second:
        await publish(3, "me")  # this process's own append: the application announces it
        assert not first.is_set() and changes.latest("t1") == 0
        await publish(3, "another replica")
        assert first.is_set() and second.is_set() and changes.latest("t1") == 3
        first.clear()
        await publish(2, "another replica")  # older than known: no news
        assert not first.is_set() and changes.latest("t1") == 3
        await client.publish(subject, b"\xff\xfe", headers={ORIGIN_HEADER: "x"})  # unreadable
        await asyncio.sleep(0.1)
        assert not first.is_set()
        changes.changed("t1", 4)  # what the application's listener does after an append
        assert first.is_set() and changes.latest("t1") == 4
    # nobody watches any more: no subscription left, nothing remembered
    assert changes.latest("t1") == 0
    changes.changed("t1", 9)
    assert changes.latest("t1") == 0
    assert not any(sub.subject == subject for sub in client._subs.values())


async def test_watching_without_nats_is_unavailable(nats_url: str) -> None:
    connection = await connect_nats(nats_url, name="pytest-closed")
    await connection.close()
    changes = TableChanges(connection.client, lambda table_id: f"x.table.{table_id}")
    with pytest.raises(DependencyUnavailableError, match="event store"):
        async with changes.watching("t1"):
            pass  # pragma: no cover
    assert changes.latest("t1") == 0
