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

from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, Player, pick_action, view_dict

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
                shown = set(_cards(view_dict(await client.view(table_id, viewer))))
                assert shown <= seen, f"seat {viewer} is shown {sorted(shown - seen)}"
                checks += 1
        seat = rng.choice(list(summary.game_status.to_act))
        view = view_dict(await players[seat].view(table_id, seat))
        await players[seat].move(table_id, seat, pick_action(view, rng))
    assert checks > 0
    await asyncio.sleep(0)
