"""The lobby counts each person's seats at open and running tables, on every replica: the
seat quota reads that count, so a player cannot spread seats over replicas to escape it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from cardtable.platform.nats import NatsConnection
from cardtable.table_service.lobby_index import LobbyIndex, TableSummary
from cardtable.table_service.state import FINISHED, OPEN, RUNNING
from cardtable_tools.servers.provisioning import NatsNamespace


def seated(table_id: str, status: str, *people: str) -> TableSummary:
    return TableSummary(table_id, "hearts", 4, len(people), status, people=people)


async def test_seats_are_counted_per_person_across_replicas(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    js, bucket = nats_connection.jetstream, nats_namespace.stream("TABLES")
    first, second = LobbyIndex(js, bucket), LobbyIndex(js, bucket)
    await first.start()
    await second.start()
    try:
        await first.put(seated("a", OPEN, "alice", "bob"))
        await first.put(seated("b", RUNNING, "alice"))
        await first.put(seated("c", RUNNING, "alice", "carol"))
        await wait_for(lambda: second.seats_held("alice") == 3)
        assert (second.seats_held("bob"), second.seats_held("carol")) == (1, 1)
        # alice left table a; table c finished: neither counts any more
        await first.put(seated("a", OPEN, "bob"))
        await first.put(seated("c", FINISHED, "alice", "carol"))
        await wait_for(lambda: second.seats_held("alice") == 1)
        assert (second.seats_held("carol"), second.seats_held("nobody")) == (0, 0)
        assert first.seats_held("alice") == 1
    finally:
        await first.stop()
        await second.stop()


def test_entries_from_older_and_newer_replicas_load() -> None:
    old = json.dumps(
        {"table_id": "t", "game": "whist", "seats": 3, "seats_taken": 2, "status": "open"}
    ).encode()
    assert TableSummary.from_json(old).people == ()
    newer = json.dumps({**json.loads(old), "added_by_a_newer_replica": 1}).encode()
    assert TableSummary.from_json(newer) == TableSummary.from_json(old)
    written = seated("t", OPEN, "alice")
    assert TableSummary.from_json(written.to_json()) == written


async def wait_for(condition: Callable[[], bool]) -> None:
    """Until the other replica's watcher has caught up (a few seconds at most)."""
    for _ in range(250):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the other replica never caught up")
