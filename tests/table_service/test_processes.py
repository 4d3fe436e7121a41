"""Several table-service processes on one stream, and a process killed mid-game."""

from __future__ import annotations

import asyncio
import random
import time

import grpc
import pytest

from cardtable.client.views import random_legal_action
from cardtable.platform.tokens import TokenCodec
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import SIGNING_KEY, Player, pick_action
from tests.table_service.processes import start_table_process

pytestmark = pytest.mark.timeout(300)


def _player(address: str, channels: list[grpc.aio.Channel], player_id: str) -> Player:
    channel = grpc.aio.insecure_channel(address)
    channels.append(channel)
    token = TokenCodec(SIGNING_KEY).issue(player_id)
    return Player(table_pb2_grpc.TableServiceStub(channel), token, player_id)


async def test_two_processes_alternate_moves_on_one_table(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    first = await start_table_process(nats_url, nats_namespace.prefix, rules_address)
    second = await start_table_process(nats_url, nats_namespace.prefix, rules_address)
    channels: list[grpc.aio.Channel] = []
    try:
        by_process = [
            {seat: _player(process.address, channels, f"p{seat}") for seat in range(4)}
            for process in (first, second)
        ]
        host = by_process[0][0]
        table_id = await host.create("hearts", 4, {"quick": "true"})
        for seat in range(4):
            await by_process[seat % 2][seat].join(table_id, seat)
        rng = random.Random(2)
        moves = 0
        while True:
            side = by_process[moves % 2]  # alternate the process every move
            summary = await side[0].view(table_id, None)
            if summary.status == "finished":
                break
            seat = rng.choice(list(summary.game_status.to_act))
            view = (await side[seat].view(table_id, seat)).seat_view
            await side[seat].move(table_id, seat, pick_action(view, rng))
            moves += 1
        assert moves == 4 + 52
        # both processes racing on the same turn: exactly one wins
        table_id = await host.create("hearts", 4, {"quick": "true"})
        for seat in range(4):
            await by_process[0][seat].join(table_id, seat)
        view = (await by_process[0][1].view(table_id, 1)).seat_view
        raced = await asyncio.gather(
            *(
                by_process[index % 2][1].move(table_id, 1, pick_action(view, rng))
                for index in range(10)
            ),
            return_exceptions=True,
        )
        assert sum(1 for result in raced if not isinstance(result, BaseException)) == 1
    finally:
        for channel in channels:
            await channel.close(None)
        first.terminate()
        second.terminate()


async def test_killed_service_is_replaced_and_timers_survive(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    channels: list[grpc.aio.Channel] = []
    process = await start_table_process(nats_url, nats_namespace.prefix, rules_address)
    try:
        players = {seat: _player(process.address, channels, f"p{seat}") for seat in range(4)}
        settings = events_pb2.TableSettings(turn_timer_ms=1500, fill_with_bots=False)
        table_id = await players[0].create("hearts", 4, {"quick": "true"}, settings)
        for seat in range(4):
            await players[seat].join(table_id, seat)
        rng = random.Random(3)
        for seat in range(4):  # everyone passes, then two cards are played
            view = (await players[seat].view(table_id, seat)).seat_view
            await players[seat].move(table_id, seat, pick_action(view, rng))
        for _ in range(2):
            summary = await players[0].view(table_id, None)
            seat = summary.game_status.to_act[0]
            view = (await players[seat].view(table_id, seat)).seat_view
            await players[seat].move(table_id, seat, pick_action(view, rng))
        before = await players[0].view(table_id, None)
        process.kill()
        await asyncio.sleep(2.0)  # the turn's deadline passes while no service runs
        started = time.monotonic()
        process = await start_table_process(nats_url, nats_namespace.prefix, rules_address)
        restart_seconds = time.monotonic() - started
        assert restart_seconds < 10
        new_players = {seat: _player(process.address, channels, f"p{seat}") for seat in range(4)}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            after = await new_players[0].view(table_id, None)
            if after.version > before.version:
                break
            await asyncio.sleep(0.2)
        assert after.version > before.version, "the restarted service did not fire the timer"
        watch = new_players[0].stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id), metadata=new_players[0].metadata
        )
        seen_timeout = False
        async for response in watch:
            if any(event.HasField("turn_timed_out") for event in response.events):
                seen_timeout = True
            if response.version >= after.version:
                break
        watch.cancel()
        assert seen_timeout
        # the game goes on through the new process to its end
        while True:
            summary = await new_players[0].view(table_id, None)
            if summary.status == "finished":
                break
            seat = summary.game_status.to_act[0]
            view = (await new_players[seat].view(table_id, seat)).seat_view
            action = random_legal_action(view, rng)
            if action is None:  # the timer moved for the seat between the two reads
                continue
            try:
                await new_players[seat].move(table_id, seat, action)
            except grpc.aio.AioRpcError as error:  # the timer may have moved first
                assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        for channel in channels:
            await channel.close(None)
        process.terminate()
