"""WatchTurns: each seat's view at its turns, over real gRPC against real NATS and rules.

Clients here never call GetTable to play: each seat's stream tells it when to act and what it
sees, and the game still reaches its end. The views are the ones GetTable gives the same seat
(so no card is shown that the seat may not see), a second replica's streams follow moves made
on the first, and the usual refusals hold.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import grpc
import pytest

from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    Cluster,
    Player,
    pick_action,
    running_table_service,
    seated_quick_hearts,
)

GAMES = [("hearts", 4, {"quick": "true"}), ("358", 3, {}), ("belote", 4, {})]


def watch(player: Player, table_id: str, seat: int, after_version: int = 0) -> Any:
    return player.stub.WatchTurns(
        table_pb2.WatchTurnsRequest(table_id=table_id, seat=seat, after_version=after_version),
        metadata=player.metadata,
    )


async def play_seat(
    player: Player, table_id: str, seat: int, rng: random.Random, compare_with: Player | None
) -> list[table_pb2.WatchTurnsResponse]:
    """Play one seat from its stream alone; returns every answer the stream gave."""
    answers = []
    moved_at = 0
    async for turn in watch(player, table_id, seat):
        answers.append(turn)
        if turn.game_status.over:
            break
        assert seat in turn.game_status.to_act
        if turn.version < moved_at:
            # While several seats are to act (passing cards), each of their moves is a new
            # version at which this seat is still to act; one may come before our own move's.
            continue
        if compare_with is not None:  # the stream's view is GetTable's, for that very seat
            table = await compare_with.view(table_id, seat)
            if table.version == turn.version:
                assert table.seat_view == turn.seat_view and table.game_status == turn.game_status
        action = pick_action(turn.seat_view, rng)
        moved_at = (await player.move(table_id, seat, action)).version  # never refused
    return answers


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_seats_play_a_whole_game_from_their_turn_streams(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    table_id = await cluster.player("host").create(game, seats, options)
    players = {seat: cluster.player(f"turns{seat}") for seat in range(seats)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    rng = random.Random(f"turns-{game}")
    streams = await asyncio.wait_for(
        asyncio.gather(
            *(
                play_seat(player, table_id, seat, random.Random(rng.random()), player)
                for seat, player in players.items()
            )
        ),
        timeout=240,
    )
    final = await players[0].view(table_id, None)
    assert final.status == "finished"
    for answers in streams:
        versions = [turn.version for turn in answers]
        assert versions == sorted(set(versions))  # each turn once, in order
        assert answers[-1].game_status.over and answers[-1].version == final.version


async def test_a_second_replica_streams_the_turns_of_moves_made_on_the_first(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    async with (
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as mover,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as watcher,
    ):
        table_id, on_mover = await seated_quick_hearts(mover, "r")
        rng = random.Random(11)
        stream = watch(watcher.player("r0"), table_id, 0)
        first = await asyncio.wait_for(stream.read(), 10)  # passing: everyone acts at once
        assert 0 in first.game_status.to_act
        moved = 0
        while moved < 12:  # moves made on the mover only; seat 0's stream is on the watcher
            table = await on_mover[0].view(table_id, None)
            seat = rng.choice(list(table.game_status.to_act))
            view = await on_mover[seat].view(table_id, seat)
            await on_mover[seat].move(table_id, seat, pick_action(view.seat_view, rng))
            moved += 1
            if seat == 0:
                turn = await asyncio.wait_for(stream.read(), 10)
                assert turn.version > first.version
        stream.cancel()


async def test_resuming_after_a_version_skips_the_turns_already_seen(cluster: Cluster) -> None:
    table_id, players = await seated_quick_hearts(cluster, "resume")
    first = await asyncio.wait_for(watch(players[1], table_id, 1).read(), 10)
    again = watch(players[1], table_id, 1, after_version=first.version)
    waiting = asyncio.ensure_future(again.read())
    await asyncio.sleep(0.3)
    assert not waiting.done()  # nothing new for seat 1 until the table moves on
    view = first.seat_view
    await players[1].move(table_id, 1, pick_action(view, random.Random(2)))
    for seat in (0, 2, 3):  # after all four passed, the play begins; seat 1's turn comes
        seat_view = await players[seat].view(table_id, seat)
        action = pick_action(seat_view.seat_view, random.Random(seat))
        await players[seat].move(table_id, seat, action)
    table = await players[0].view(table_id, None)
    while 1 not in table.game_status.to_act:
        seat = table.game_status.to_act[0]
        seat_view = await players[seat].view(table_id, seat)
        action = pick_action(seat_view.seat_view, random.Random(seat))
        await players[seat].move(table_id, seat, action)
        table = await players[0].view(table_id, None)
    turn = await asyncio.wait_for(waiting, 10)
    assert turn.version == table.version > first.version
    again.cancel()


async def test_refusals(cluster: Cluster) -> None:
    table_id, players = await seated_quick_hearts(cluster, "no")

    async def code_of(stream: Any) -> grpc.StatusCode:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await asyncio.wait_for(stream.read(), 10)
        return caught.value.code()

    other_seat = watch(players[0], table_id, 1)
    assert await code_of(other_seat) == grpc.StatusCode.PERMISSION_DENIED
    no_token = players[0].stub.WatchTurns(table_pb2.WatchTurnsRequest(table_id=table_id, seat=0))
    assert await code_of(no_token) == grpc.StatusCode.UNAUTHENTICATED
    unknown = watch(players[0], str(uuid.uuid4()), 0)
    assert await code_of(unknown) == grpc.StatusCode.NOT_FOUND
    assert await code_of(watch(players[0], "not-a-table", 0)) == grpc.StatusCode.INVALID_ARGUMENT
    assert await code_of(watch(players[0], table_id, 9)) == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_player_who_leaves_is_told_the_seat_is_no_longer_theirs(cluster: Cluster) -> None:
    table_id, players = await seated_quick_hearts(cluster, "gone")
    stream = watch(players[2], table_id, 2)
    await asyncio.wait_for(stream.read(), 10)  # passing: seat 2 is to act at once
    await players[2].leave(table_id)  # a computer player takes the seat over
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(stream.read(), 10)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
