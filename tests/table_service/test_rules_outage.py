"""The rules service away: moves are UNAVAILABLE with nothing appended, and work once it is back.

The table service asks its per-move questions over one ``Pipeline`` stream; when the rules
server stops, that stream breaks, and the next move after the restart must open a new one.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import grpc
import pytest

from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.rules_service import codec, servicer
from cardtable.rules_service.main import rules_service
from cardtable_api.rules.v1 import rules_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from cardtable_tools.servers.server_process import free_port
from tests.table_service.harness import (
    pick_action,
    play_to_the_end,
    running_rules,
    running_table_service,
    seated_quick_hearts,
)


async def test_moves_while_the_rules_service_is_down_append_nothing(
    nats_url: str, nats_namespace: NatsNamespace
) -> None:
    port = free_port()
    rules = await start_server([rules_service()], port=port, host="127.0.0.1")
    try:
        await _play_through_an_outage(nats_url, nats_namespace, port, rules)
    finally:
        await rules.stop(None)


async def _play_through_an_outage(
    nats_url: str, nats_namespace: NatsNamespace, port: int, rules: RunningServer
) -> None:
    async with running_table_service(
        nats_url, nats_namespace.prefix, f"127.0.0.1:{port}"
    ) as cluster:
        table_id = await cluster.player("host").create("hearts", 4, {"quick": "true"})
        players = {seat: cluster.player(f"out{seat}") for seat in range(4)}
        for seat, player in players.items():
            await player.join(table_id, seat)
        view = await players[0].view(table_id, 0)
        action = pick_action(view.seat_view, random.Random(4))
        js = cluster.nats.jetstream
        before = (await js.stream_info(cluster.names.stream)).state.last_seq

        await rules.stop(None)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await players[0].move(table_id, 0, action)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "rules service" in (caught.value.details() or "")
        assert (await js.stream_info(cluster.names.stream)).state.last_seq == before

        rules = await start_server([rules_service()], port=port, host="127.0.0.1")
        try:
            for _ in range(50):  # the channel reconnects on its own schedule
                try:
                    reply = await players[0].move(table_id, 0, action)
                    break
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.UNAVAILABLE
                    await asyncio.sleep(0.2)
            else:
                raise AssertionError("moves did not work again after the rules service came back")
            assert reply.version == view.version + 1
            assert (await js.stream_info(cluster.names.stream)).state.last_seq == before + 1
        finally:
            await rules.stop(None)


async def test_a_rules_replica_that_lost_the_tables_states_costs_a_rebuild_not_an_error(
    nats_url: str, nats_namespace: NatsNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table holds its game state only by reference (rules.proto, GameState). A rules
    replica restarted, or another one answering, does not hold it: the table service rebuilds
    the state from the table's inputs and the player never notices."""
    rebuilds: list[int] = []
    rebuild = servicer.rebuild_state

    def counted(request: rules_pb2.RebuildRequest, on_step: Callable[[], None]) -> object:
        rebuilds.append(len(request.inputs))
        return rebuild(request, on_step)

    monkeypatch.setattr(servicer, "rebuild_state", counted)
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        table_id, players = await seated_quick_hearts(cluster, "lost")
        rng = random.Random(9)
        table = cluster.parts.app._cache[table_id]
        assert table.game_state is not None
        assert table.game_state.reference and not table.game_state.snapshot

        for lost_before in ("view", "move"):
            if lost_before == "view":
                monkeypatch.setattr(codec, "MEMO", codec.StateMemo())  # the replica restarted
            summary = await players[0].view(table_id, None)
            seat = summary.game_status.to_act[0]
            view = await players[seat].view(table_id, seat)
            if lost_before == "move":
                monkeypatch.setattr(codec, "MEMO", codec.StateMemo())
            reply = await players[seat].move(table_id, seat, pick_action(view.seat_view, rng))
            assert reply.version == view.version + 1
        assert rebuilds == [1, 2]  # from the inputs of the moment: the deal, then a move more
        assert await play_to_the_end(table_id, players, rng) > 0
