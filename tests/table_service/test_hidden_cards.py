"""No view, watch stream or spectator ever shows a card its viewer may not see.

Random games through gRPC: at random moments every seat's view and the spectator's view are
compared with the cards that viewer's own redacted watch stream has shown it so far, and
every streamed event's audience is checked against the viewer.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format

from cardtable.table_service.state import visible
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    Cluster,
    Player,
    pick_action,
    running_table_service,
)

CARD = re.compile(r"^(10|[2-9JQKA])[CDHS]$")


def _cards(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from (word for word in value.split() if CARD.match(word))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _cards(item)
    elif isinstance(value, list):
        for item in value:
            yield from _cards(item)


async def _stream(player: Player, table_id: str, seat: int | None) -> list[events_pb2.Event]:
    """Everything the viewer's watch stream has delivered up to the table's current version."""
    current = (await player.view(table_id, None)).version
    request = table_pb2.WatchTableRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    call = player.stub.WatchTable(request, metadata=player.metadata)
    events: list[events_pb2.Event] = []
    try:
        async for response in call:
            events.extend(response.events)
            if response.version >= current:
                break
    finally:
        call.cancel()
    return events


def _check_audience(events: list[events_pb2.Event], seat: int | None) -> None:
    for event in events:
        kind = event.audience.kind
        assert kind != common_pb2.Audience.KIND_SERVER_ONLY, "a server-only event was streamed"
        if kind == common_pb2.Audience.KIND_SEATS:
            assert seat is not None and seat in event.audience.seats


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [("hearts", 4, {"quick": "true"}), ("358", 3, {}), ("belote", 4, {})],
)
async def test_views_and_streams_never_show_hidden_cards(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    rng = random.Random(f"hidden-{game}")
    host = cluster.player("host")
    table_id = await host.create(game, seats, options)
    players = {seat: cluster.player(f"p{seat}") for seat in range(seats)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    checks = 0
    for _step in range(160):
        summary = await host.view(table_id, None)
        if summary.status == "finished":
            break
        if rng.random() < 0.15:
            for viewer in [None, *range(seats)]:
                client = host if viewer is None else players[viewer]
                events = await _stream(client, table_id, viewer)
                _check_audience(events, viewer)
                seen = {
                    card for event in events for card in _cards(json_format.MessageToDict(event))
                }
                seat_view = (await client.view(table_id, viewer)).seat_view
                # An empty view would pass below: check that this one is filled, as the viewer's.
                assert seat_view.game == game and seat_view.players == seats
                assert seat_view.HasField("seat") == (viewer is not None)
                assert viewer is not None or not seat_view.hand
                shown = set(_cards(json_format.MessageToDict(seat_view)))
                assert shown <= seen, f"seat {viewer} is shown {sorted(shown - seen)}"
                checks += 1
        seat = rng.choice(list(summary.game_status.to_act))
        view = (await players[seat].view(table_id, seat)).seat_view
        await players[seat].move(table_id, seat, pick_action(view, rng))
    assert checks > 0
    await asyncio.sleep(0)


async def test_a_seat_given_up_through_another_replica_stops_showing_its_cards(
    cluster: Cluster, nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    """The watch's replica learns of the leave only from the stream, not from its own cache.

    ``w`` watches seat 3 through the second replica, then leaves the open table through the
    first; ``q`` takes the seat, and the last join starts the game and deals. ``w``'s stream
    must carry none of ``q``'s cards.
    """
    async with running_table_service(nats_url, nats_namespace.prefix, rules_address) as second:
        host = cluster.player("host")
        table_id = await host.create("hearts", 4, {"quick": "true"})
        for seat in (0, 1):
            await cluster.player(f"p{seat}").join(table_id, seat)
        leaver = cluster.player("w")
        await leaver.join(table_id, 3)
        watcher = second.player("w")
        call = watcher.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, seat=3), metadata=watcher.metadata
        )
        received: list[events_pb2.Event] = []

        async def until_dealt() -> None:
            async for response in call:
                received.extend(response.events)
                if any(event.HasField("game_started") for event in response.events):
                    return

        watching = asyncio.create_task(until_dealt())
        await asyncio.sleep(0.2)  # the stream is open on the second replica
        await leaver.leave(table_id)
        await cluster.player("q").join(table_id, 3)
        await cluster.player("p2").join(table_id, 2)
        try:
            await asyncio.wait_for(watching, 10)
        finally:
            call.cancel()
        left_at = next(
            index for index, event in enumerate(received) if event.HasField("player_left")
        )
        after_leaving = received[left_at:]
        assert any(event.HasField("game_started") for event in after_leaving)
        assert all(visible(event, None) for event in after_leaving), [
            event.WhichOneof("body") for event in after_leaving if not visible(event, None)
        ]
