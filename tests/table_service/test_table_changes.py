"""TableChanges on a real NATS server: who is woken, by which messages, and for how long."""

from __future__ import annotations

import asyncio

import pytest
from nats.js import api

from cardtable.eventlog.store import (
    ORIGIN_HEADER,
    AppendConflictError,
    AppendResult,
    EventStore,
)
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.table_service.errors import DependencyUnavailableError
from cardtable.table_service.table_changes import TableChanges
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.servers.provisioning import NatsNamespace

SETTLE_SECONDS = 0.1


def _batch(version: int, command_id: str = "") -> events_pb2.EventBatch:
    return events_pb2.EventBatch(
        table_id="t1", command_id=command_id or f"c{version}", table_version=version
    )


async def _append(store: EventStore, batch: events_pb2.EventBatch, expected: int) -> AppendResult:
    return await store.append("t1", batch.command_id, batch.SerializeToString(), expected)


async def test_other_processes_appends_wake_watchers_and_own_ones_do_not(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    client, js = nats_connection.client, nats_connection.jetstream
    mine = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    await mine.ensure_stream()
    assert mine.republishes
    other_replica = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    changes = TableChanges(client, mine)

    async def settle() -> None:
        await client.flush()
        await asyncio.sleep(SETTLE_SECONDS)

    async with changes.watching("t1") as first, changes.watching("t1") as second:
        await _append(mine, _batch(1), 0)  # own append: the application announces it
        await settle()
        assert not first.is_set() and changes.latest("t1") == 0
        last = await mine.last("t1")
        assert last is not None
        await _append(other_replica, _batch(2), last.sequence)
        await settle()
        assert first.is_set() and second.is_set() and changes.latest("t1") == 2
        first.clear()
        with pytest.raises(AppendConflictError):  # the loser of a conflict is no change
            await _append(other_replica, _batch(3, "loser"), last.sequence)
        await settle()
        assert not first.is_set() and changes.latest("t1") == 2
        # An older version than known (a late copy) is no news; an unreadable one is ignored.
        await client.publish(mine.stored_subject("t1"), _batch(1).SerializeToString())
        await client.publish(mine.stored_subject("t1"), b"\xff\xfe")
        await settle()
        assert not first.is_set()
        changes.changed("t1", 4)  # what the application's listener does after an append
        assert first.is_set() and changes.latest("t1") == 4
    # nobody watches any more: no subscription left, nothing remembered
    assert changes.latest("t1") == 0
    changes.changed("t1", 9)
    assert changes.latest("t1") == 0
    assert not any(sub.subject == mine.stored_subject("t1") for sub in client._subs.values())


async def test_without_republishing_every_message_is_a_hint_that_wakes(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    """On a stream that cannot republish, a refused append's version may run ahead of the
    log: the stored batch of that version, arriving after it, must wake the watchers too."""
    client, js = nats_connection.client, nats_connection.jetstream
    store = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    await js.add_stream(api.StreamConfig(name=store.stream, subjects=[store.subject("*")]))
    assert not store.republishes  # ensure_stream was not called: nothing known
    changes = TableChanges(client, store)
    async with changes.watching("t1") as changed:
        await client.publish(store.subject("t1"), _batch(1, "refused").SerializeToString())
        await client.flush()
        await asyncio.sleep(SETTLE_SECONDS)
        assert changed.is_set() and changes.latest("t1") == 1
        changed.clear()
        await client.publish(
            store.subject("t1"),
            _batch(1).SerializeToString(),
            headers={ORIGIN_HEADER: "another replica"},
        )
        await client.flush()
        await asyncio.sleep(SETTLE_SECONDS)
        assert changed.is_set() and changes.latest("t1") == 1


async def test_watching_without_nats_is_unavailable(
    nats_url: str, nats_connection: NatsConnection
) -> None:
    connection = await connect_nats(nats_url, name="pytest-closed")
    await connection.close()
    store = EventStore(nats_connection.jetstream, LogNames.from_prefix("x"))
    changes = TableChanges(connection.client, store)
    with pytest.raises(DependencyUnavailableError, match="event store"):
        async with changes.watching("t1"):
            pass  # pragma: no cover
    assert changes.latest("t1") == 0


async def test_followers_and_waiters_share_one_subscription_and_followers_get_every_batch(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    """WatchTable streams send the batches themselves: this replica's own appends reach them
    too, each with the sequence it was stored at, and an unreadable message is skipped."""
    client, js = nats_connection.client, nats_connection.jetstream
    mine = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    await mine.ensure_stream()
    other_replica = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    changes = TableChanges(client, mine)
    subject = mine.stored_subject("t1")

    def subscriptions() -> int:
        return sum(sub.subject == subject for sub in client._subs.values())

    async with (
        changes.following("t1") as first,
        changes.following("t1") as second,
        changes.watching("t1") as changed,
    ):
        assert subscriptions() == 1
        own = await _append(mine, _batch(1), 0)
        await client.publish(subject, b"\xff\xfe")
        theirs = await _append(other_replica, _batch(2), own.sequence)
        for arrivals in (first, second):
            received = [await asyncio.wait_for(arrivals.get(), 5) for _ in range(2)]
            assert [(batch.table_version, sequence) for batch, sequence in received] == [
                (1, own.sequence),
                (2, theirs.sequence),
            ]
        assert changed.is_set() and changes.latest("t1") == 2  # woken by theirs only
    assert subscriptions() == 0
    async with changes.following("t1") as again:  # a table followed anew is subscribed anew
        assert subscriptions() == 1
        await _append(mine, _batch(3), theirs.sequence)
        batch, _sequence = await asyncio.wait_for(again.get(), 5)
        assert batch.table_version == 3
    assert subscriptions() == 0


async def test_streams_joining_together_all_wait_for_the_one_subscription(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    """A stream that joins while the first is still subscribing must not read the log before
    the subscription is made, or a batch stored in between would never reach it."""
    client, js = nats_connection.client, nats_connection.jetstream
    store = EventStore(js, LogNames.from_prefix(nats_namespace.prefix))
    await store.ensure_stream()
    changes = TableChanges(client, store)
    subject = store.stored_subject("t1")
    joined: list[int] = []

    all_in = asyncio.Barrier(3)

    async def follow() -> None:
        async with changes.following("t1"):
            joined.append(sum(sub.subject == subject for sub in client._subs.values()))
            await all_in.wait()  # none leaves before all have joined

    await asyncio.gather(*(follow() for _ in range(3)))
    assert joined == [1, 1, 1]
    assert not any(sub.subject == subject for sub in client._subs.values())
