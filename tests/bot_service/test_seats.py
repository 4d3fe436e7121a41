"""Computer players against the real table service: fill, leavers, reclaim, crash, replicas."""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cardtable.bot_service.table_client import TableClient
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from tests.bot_service.harness import (
    actions_of,
    alone_with_computers,
    events_named,
    eventually,
    fill_settings,
    play_seat,
    running_bot_service,
    start_bot_process,
    table_log,
    view_of,
    wait_until_finished,
)
from tests.table_service.harness import NO_TIMERS, Cluster, Player

pytestmark = pytest.mark.timeout(120)
QUICK = {"quick": "true"}
#: Moves a deaf bot service must make, each found by its recheck, before the test is content.
MOVES_HEARD_OF_BY_RECHECK = 16
PLAY = common_pb2.GameStatus.PHASE_PLAY


def actors_by_seat(batches: list[events_pb2.EventBatch]) -> dict[int, set[str]]:
    actors: dict[int, set[str]] = defaultdict(set)
    for action in actions_of(batches):
        actors[action.seat].add(action.actor_id)
    return actors


async def test_a_table_with_one_person_fills_and_plays_to_the_end(
    nats_url: str, cluster: Cluster
) -> None:
    async with running_bot_service(nats_url, cluster, "solo") as bots:
        host = cluster.player("host")
        table_id = await alone_with_computers(host, QUICK)
        await play_seat(host, table_id, 0, random.Random(1))
        batches = await table_log(cluster, table_id)
        assert events_named(batches, "game_finished")
        fills = events_named(batches, "seat_handed_to_bot")
        assert sorted(event.seat_handed_to_bot.seat for event in fills) == [1, 2, 3]
        assert actors_by_seat(batches) == {
            0: {"host"},
            1: {bots.actor_id},
            2: {bots.actor_id},
            3: {bots.actor_id},
        }
        assert not any(action.by_timeout for action in actions_of(batches))
        assert bots.metric("bot_moves_total", {"strategy": "random"}) == 3 * 14
        # the game is over: every seat is let go
        await eventually(lambda: bots.parts.supervisor.held() == [])
        assert bots.metric("bot_seat_releases_total", {"reason": "finished"}) == 3


async def test_a_person_who_leaves_is_replaced_and_the_game_finishes(
    nats_url: str, cluster: Cluster
) -> None:
    async with running_bot_service(nats_url, cluster, "standin", reclaim_grace_seconds=0.05):
        host = cluster.player("p0")
        table_id = await host.create("hearts", 4, QUICK, NO_TIMERS)
        people = {seat: cluster.player(f"p{seat}") for seat in range(4)}
        for seat, person in people.items():
            await person.join(table_id, seat)
        rng = random.Random(2)

        async def leaver() -> None:
            await play_seat(people[2], table_id, 2, rng, moves=4)  # the pass and three cards
            await people[2].leave(table_id)

        await asyncio.gather(
            leaver(), *(play_seat(people[seat], table_id, seat, rng) for seat in (0, 1, 3))
        )
        batches = await table_log(cluster, table_id)
        assert events_named(batches, "game_finished")
        handed = events_named(batches, "seat_handed_to_bot")
        assert [event.seat_handed_to_bot.handover_reason for event in handed] == [
            events_pb2.SeatHandedToBot.REASON_LEFT
        ]
        seat_two = [action.actor_id for action in actions_of(batches) if action.seat == 2]
        assert seat_two[:4] == ["p2"] * 4
        assert set(seat_two[4:]) == {"bots:standin"} and len(seat_two) == 14


async def _hearts_seat_2_left(cluster: Cluster) -> tuple[Player, str, dict[int, Player]]:
    """A quick Hearts game of four people, p0 to p3, whose seat 2 left before passing (the
    computer passes for them)."""
    host = cluster.player("p0")
    table_id = await host.create("hearts", 4, QUICK, NO_TIMERS)
    people = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, person in people.items():
        await person.join(table_id, seat)
    await people[2].leave(table_id)
    return host, table_id, people


async def test_a_returning_person_gets_the_seat_back(nats_url: str, cluster: Cluster) -> None:
    async with running_bot_service(nats_url, cluster, "polite", reclaim_grace_seconds=1.0) as bots:
        host, table_id, people = await _hearts_seat_2_left(cluster)
        rng = random.Random(3)
        others = [
            asyncio.create_task(play_seat(people[seat], table_id, seat, rng)) for seat in (0, 1, 3)
        ]
        # The person comes back at their next turn. A disconnected person may not view the
        # seat, so the test looks up a legal card with a bot token (their client would know
        # its own hand).
        peek = cluster.computer(table_id, 2, "bots:test-peek")
        try:
            deadline = time.monotonic() + 30
            while True:
                assert time.monotonic() < deadline, "seat 2 never came back to its person"
                table = await view_of(host, table_id, None)
                status = table.game_status if table else None
                if status and status.current_phase == PLAY and 2 in status.to_act:
                    legal = (await peek.view(table_id, 2)).seat_view.legal_actions
                    if legal:
                        await people[2].move(table_id, 2, legal[0].action)
                        break
                await asyncio.sleep(0.01)
            await play_seat(people[2], table_id, 2, rng)
            await asyncio.gather(*others)
        finally:
            for task in others:
                task.cancel()
        batches = await table_log(cluster, table_id)
        assert events_named(batches, "game_finished")
        assert [e.seat_reclaimed.seat for e in events_named(batches, "seat_reclaimed")] == [2]
        seat_two = [action.actor_id for action in actions_of(batches) if action.seat == 2]
        assert seat_two[0] == bots.actor_id  # the pass
        assert set(seat_two[1:]) == {"p2"}
        await eventually(lambda: bots.parts.supervisor.held() == [])
        assert bots.metric("bot_seat_releases_total", {"reason": "reclaimed"}) == 1


async def test_a_person_who_joins_again_gets_the_seat_and_the_bot_lets_go(
    nats_url: str, cluster: Cluster
) -> None:
    async with running_bot_service(nats_url, cluster, "yields", reclaim_grace_seconds=0.05) as bots:
        _, table_id, people = await _hearts_seat_2_left(cluster)
        rng = random.Random(5)
        for seat in (0, 1, 3):
            await play_seat(people[seat], table_id, seat, rng, moves=1)

        async def bot_passed() -> bool:
            actions = actions_of(await table_log(cluster, table_id))
            return any(action.seat == 2 and action.actor_id == bots.actor_id for action in actions)

        deadline = time.monotonic() + 10
        while not await bot_passed():
            assert time.monotonic() < deadline, "the computer never passed for seat 2"
            await asyncio.sleep(0.02)
        assert await people[2].join(table_id, 2) == 2  # back: the seat is theirs at once
        await eventually(lambda: bots.parts.supervisor.held() == [])
        await asyncio.gather(*(play_seat(people[seat], table_id, seat, rng) for seat in range(4)))
        batches = await table_log(cluster, table_id)
        assert events_named(batches, "game_finished")
        reclaimed = False
        after: set[str] = set()
        for batch in batches:
            for event in batch.events:
                if event.HasField("seat_reclaimed"):
                    assert (event.seat_reclaimed.seat, event.seat_reclaimed.player_id) == (2, "p2")
                    reclaimed = True
                elif reclaimed and event.HasField("action_taken") and event.action_taken.seat == 2:
                    after.add(event.action_taken.actor_id)
        assert reclaimed and after == {"p2"}
        assert bots.metric("bot_seat_releases_total", {"reason": "reclaimed"}) == 1


async def test_a_killed_bot_service_is_replaced_and_the_game_finishes(
    nats_url: str, cluster: Cluster
) -> None:
    host = cluster.player("host")
    table_id = await alone_with_computers(host, QUICK)
    rng = random.Random(4)
    first = await start_bot_process(nats_url, cluster, "first")
    try:
        await play_seat(host, table_id, 0, rng, moves=4)  # the pass and three cards
    finally:
        first.kill()  # SIGKILL: its claims stay behind until they expire
    second = await start_bot_process(nats_url, cluster, "second")
    try:
        await play_seat(host, table_id, 0, rng)
    finally:
        exit_code = second.terminate()  # SIGTERM: a graceful stop
    assert exit_code == 0
    batches = await table_log(cluster, table_id)
    assert events_named(batches, "game_finished")
    actors = actors_by_seat(batches)
    assert actors[0] == {"host"}
    bot_actors = set().union(*(actors[seat] for seat in (1, 2, 3)))
    assert bot_actors == {"bots:first", "bots:second"}
    assert not any(action.by_timeout for action in actions_of(batches))


async def test_two_replicas_never_play_the_same_seat(nats_url: str, cluster: Cluster) -> None:
    async with (
        running_bot_service(nats_url, cluster, "left") as left,
        running_bot_service(nats_url, cluster, "right") as right,
    ):
        host = cluster.player("host")
        table_ids = [
            await host.create("hearts", 4, QUICK, fill_settings(wait_ms=100)) for _ in range(4)
        ]
        for table_id in table_ids:
            await wait_until_finished(host, table_id)
        bot_moves = 0
        for table_id in table_ids:
            batches = await table_log(cluster, table_id)
            for seat, actors in actors_by_seat(batches).items():
                assert len(actors) == 1, f"seat {seat} of {table_id} played by {actors}"
            bot_moves += len(actions_of(batches))
        # each replica counts the moves the table service accepted from it: a move made twice
        # (even one the table service de-duplicated) would make the sum exceed the log
        counted = [bots.metric("bot_moves_total", {"strategy": "random"}) for bots in (left, right)]
        assert sum(counted) == bot_moves == 4 * 4 * 14
        assert all(count > 0 for count in counted), counted


class FirstResponseOnly:
    """A watch call that passes on its first response and then hears nothing more: what a
    bot sees when the stream's later messages are lost on the way."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __aiter__(self) -> AsyncIterator[table_pb2.WatchTableResponse]:
        return self._responses()

    async def _responses(self) -> AsyncIterator[table_pb2.WatchTableResponse]:
        async for response in self._call:
            yield response
            break
        await asyncio.Event().wait()  # silence, until cancelled

    def cancel(self) -> bool:
        return bool(self._call.cancel())


async def test_moves_are_counted_under_the_level_the_table_asked_for(
    nats_url: str, cluster: Cluster
) -> None:
    async with running_bot_service(nats_url, cluster, "levels") as bots:
        host = cluster.player("host")
        table_id = await alone_with_computers(host, QUICK, strategy="easy")
        await play_seat(host, table_id, 0, random.Random(2))
        assert bots.metric("bot_moves_total", {"strategy": "easy"}) == 3 * 14
        assert bots.metric("bot_moves_total", {"strategy": "rules"}) == 0


async def test_a_bot_that_hears_nothing_still_moves_before_the_turn_timer(
    nats_url: str, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = TableClient.watch
    monkeypatch.setattr(
        TableClient,
        "watch",
        lambda client, table_id, from_version: FirstResponseOnly(
            watch(client, table_id, from_version)
        ),
    )
    settings = events_pb2.TableSettings(turn_timer_ms=2_000, fill_with_bots=True, fill_wait_ms=100)
    async with running_bot_service(nats_url, cluster, "deaf"):
        host = cluster.player("host")
        table_id = await host.create("hearts", 4, QUICK, settings)
        # Each move waits for a recheck, not for news: a few tricks' worth shows the fallback
        # keeps up as well as a whole game would, in a third of the time.
        batches = await table_log(cluster, table_id)
        deadline = time.monotonic() + 60
        while len(actions_of(batches)) < MOVES_HEARD_OF_BY_RECHECK:
            assert time.monotonic() < deadline, f"{len(actions_of(batches))} moves in 60 s"
            await asyncio.sleep(0.2)
            batches = await table_log(cluster, table_id)
        assert not events_named(batches, "turn_timed_out")
