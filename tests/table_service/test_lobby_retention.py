"""Finished tables leave the lobby once their retention has passed, on every replica.

Against real NATS: the bucket must lose them too, so that a replica started later never
loads them, while open and running tables stay whatever their age.
"""

from __future__ import annotations

import asyncio

from cardtable.platform.nats import NatsConnection
from cardtable.table_service.application import summary_of
from cardtable.table_service.lobby_index import LobbyIndex, TableSummary
from cardtable.table_service.state import FINISHED, OPEN, RUNNING, TableState, apply_batch
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.servers.provisioning import NatsNamespace

DAY = 86_400.0
START = 1_800_000_000.0  # seconds since the epoch, in 2027


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def finished(table_id: str, finished_at: float) -> TableSummary:
    return TableSummary(
        table_id, "hearts", 4, 4, FINISHED, created_at=finished_at - 600, finished_at=finished_at
    )


async def test_expired_finished_tables_leave_memory_and_the_bucket_on_every_replica(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    js, bucket, clock = nats_connection.jetstream, nats_namespace.stream("TABLES"), Clock()
    first = LobbyIndex(js, bucket, finished_retention_seconds=DAY, now=clock)
    await first.start()
    second = LobbyIndex(js, bucket, finished_retention_seconds=DAY, now=clock)
    await second.start()
    try:
        await first.put(finished("old", START - 2 * DAY))
        await first.put(finished("recent", START - 3600))
        # written before finished_at existed: its creation bounds its end
        await first.put(TableSummary("legacy", "whist", 3, 3, FINISHED, created_at=START - 3 * DAY))
        await first.put(
            TableSummary("playing", "hearts", 4, 4, RUNNING, created_at=START - 9 * DAY)
        )
        await first.put(TableSummary("waiting", "belote", 4, 1, OPEN, created_at=START - 9 * DAY))
        await wait_until_listed(second, 5)

        assert sorted(first.expired()) == ["legacy", "old"]
        assert await first.sweep() == 2
        assert sorted(s.table_id for s in first.tables()) == ["playing", "recent", "waiting"]
        later = LobbyIndex(js, bucket, finished_retention_seconds=DAY, now=clock)
        await later.start()  # a replica started now never sees them
        assert sorted(s.table_id for s in later.tables()) == ["playing", "recent", "waiting"]
        await later.stop()

        # the other replica heard nothing (a purge leaves no message) and drops them itself
        assert len(second.tables()) == 5
        assert await second.sweep() == 2
        assert sorted(s.table_id for s in second.tables()) == ["playing", "recent", "waiting"]

        clock.now += DAY  # a day on, the recent one goes too; the open and running ones never
        assert await first.sweep() == 1
        assert sorted(s.table_id for s in first.tables()) == ["playing", "waiting"]
    finally:
        await first.stop()
        await second.stop()


async def test_a_retention_of_zero_keeps_every_finished_table(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    index = LobbyIndex(
        nats_connection.jetstream, nats_namespace.stream("TABLES"), finished_retention_seconds=0
    )
    await index.start()
    try:
        await index.put(finished("ancient", 1.0))
        assert index.expired() == [] and await index.sweep() == 0
        assert [s.table_id for s in index.tables()] == ["ancient"]
    finally:
        await index.stop()


def test_a_finished_tables_summary_says_when_its_game_ended() -> None:
    state = TableState(table_id="t1")
    created = events_pb2.Event(table_created=events_pb2.TableCreated(game="hearts", seats=4))
    apply_batch(state, batch(created, START - 600, version=1), 1)
    assert summary_of(state).finished_at == 0.0
    ended = events_pb2.Event(game_finished=events_pb2.GameFinished(totals=[1, 2, 3, 4]))
    apply_batch(state, batch(ended, START, version=2), 2)
    assert state.status == FINISHED and summary_of(state).finished_at == START


def batch(event: events_pb2.Event, at: float, version: int) -> events_pb2.EventBatch:
    message = events_pb2.EventBatch(events=[event], command_id=f"c{version}", table_version=version)
    message.occurred_at.FromNanoseconds(int(at * 1e9))
    return message


async def wait_until_listed(index: LobbyIndex, count: int) -> None:
    for _ in range(200):
        if len(index.tables()) == count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(index.tables())} tables listed, expected {count}")
