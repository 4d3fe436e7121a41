"""Computer players never run out: a bot-held seat that no computer player moves for within
the deadline is moved by the table service itself, said in a log line and a metric an operator
alerts on; on a table with a turn timer too, where waiting for the timer would stall the game
for its length at every computer turn."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from cardtable.table_service.limits import TableLimits
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import Cluster, pick_action, running_table_service

FALLBACK_MS = 100


@pytest.fixture
async def cluster(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> AsyncIterator[Cluster]:
    """No bot service at all: the worst shortage there is."""
    async with running_table_service(
        nats_url,
        nats_namespace.prefix,
        rules_address,
        limits=TableLimits(min_turn_timer_ms=50, bot_fallback_ms=FALLBACK_MS),
    ) as running:
        yield running


@pytest.mark.parametrize("turn_timer_ms", [0, 60_000], ids=["without a timer", "with a timer"])
async def test_a_game_never_stalls_on_a_computer_seat(cluster: Cluster, turn_timer_ms: int) -> None:
    person = cluster.player("alone")
    # The person starts the game; a fill due at once could seat computers before they join.
    settings = events_pb2.TableSettings(
        turn_timer_ms=turn_timer_ms, fill_with_bots=True, fill_wait_ms=60_000
    )
    table_id = await person.create("hearts", 4, {"quick": "true"}, settings)
    await person.join(table_id, 0)
    await person.stub.StartGame(
        table_pb2.StartGameRequest(command_id=str(uuid.uuid4()), table_id=table_id),
        metadata=person.metadata,
    )
    rng = random.Random(11)
    deadline = time.monotonic() + 60
    waits: list[float] = []
    waiting_since = time.monotonic()
    while (table := await person.view(table_id, 0)).status != "finished":
        assert time.monotonic() < deadline, "the game stalled"
        if 0 in table.game_status.to_act:
            await person.move(table_id, 0, pick_action(table.seat_view, rng))
            waiting_since = time.monotonic()
        else:
            await asyncio.sleep(0.02)
            waits.append(time.monotonic() - waiting_since)
    security = cluster.parts.app.security
    events = [
        event
        for stored in await cluster.parts.app.history(table_id)
        for event in security.opened(table_id, stored.batch).events
    ]
    actions = [event.action_taken for event in events if event.HasField("action_taken")]
    bot_actions = [action for action in actions if action.seat != 0]
    assert bot_actions and all(action.by_timeout for action in bot_actions)
    assert not any(action.by_timeout for action in actions if action.seat == 0)
    timers = [event.turn_timer_started for event in events if event.HasField("turn_timer_started")]
    if not turn_timer_ms:  # no deadline ever covered the person's seat: the table has no timer
        assert timers and all(0 not in timer.seats for timer in timers)
    else:  # the person's turns kept the table's timer
        assert any(0 in timer.seats for timer in timers)
    fallbacks = cluster.registry.get_sample_value("cardtable_table_bot_fallback_moves_total")
    assert fallbacks == len(bot_actions)
    # each wait for the computer seats stayed near the deadline (three seats in a row at most)
    assert max(waits) < 3 * FALLBACK_MS / 1000 + 5
