"""The rules service away: moves are UNAVAILABLE with nothing appended, and work once it is back.

The table service asks its per-move questions over one ``Pipeline`` stream; when the rules
server stops, that stream breaks, and the next move after the restart must open a new one.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.rules_service.main import rules_service
from cardtable_tools.servers.provisioning import NatsNamespace
from cardtable_tools.servers.server_process import free_port
from tests.table_service.harness import pick_action, running_table_service


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
