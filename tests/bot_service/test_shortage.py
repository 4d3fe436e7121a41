"""A full bot service against the real table service: one player's flood of tables fills it, and
another player's table still gets its computer players first when seats free up; the shortage
shows in the metrics and the log."""

from __future__ import annotations

import logging
import random

import pytest

from tests.bot_service.harness import (
    RunningBots,
    actions_of,
    alone_with_computers,
    eventually,
    play_seat,
    running_bot_service,
    table_log,
)
from tests.table_service.harness import Cluster, Player

pytestmark = pytest.mark.timeout(120)
QUICK = {"quick": "true"}
#: Two Hearts tables' computer seats (three each).
MAX_SEATS = 6


async def _table_with_one_person(person: Player) -> str:
    """A quick Hearts table its creator sits at alone; computer players fill the rest."""
    return await alone_with_computers(person, QUICK)


def _tables_held(bots: RunningBots) -> list[str]:
    """The table of each seat the replica plays, sorted."""
    return sorted(table_id for table_id, _ in bots.parts.supervisor.held())


def _tables_waiting(bots: RunningBots) -> list[str]:
    return [seat.table_id for seat in bots.parts.supervisor.waiting()]


async def test_a_flood_of_tables_keeps_no_other_creator_waiting_behind_it(
    nats_url: str, cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cardtable.bot_service.supervisor")
    async with running_bot_service(nats_url, cluster, "small", max_seats=MAX_SEATS) as bots:
        mallory, alice = cluster.player("mallory"), cluster.player("alice")
        playing = [await _table_with_one_person(mallory) for _ in range(2)]
        await eventually(lambda: _tables_held(bots) == sorted(playing * 3))
        # one table after the other, so that the order they wait in is known
        flooded = [await _table_with_one_person(mallory)]
        await eventually(lambda: len(_tables_waiting(bots)) == 3)
        flooded.append(await _table_with_one_person(mallory))
        await eventually(lambda: len(_tables_waiting(bots)) == 6)
        guest = await _table_with_one_person(alice)
        await eventually(lambda: len(_tables_waiting(bots)) == 9)
        await eventually(lambda: bots.metric("bot_seats_waiting") == 9)
        # the longest-waiting tables are mallory's
        assert _tables_waiting(bots) == [*[flooded[0]] * 3, *[flooded[1]] * 3, *[guest] * 3]
        assert bots.metric("bot_seat_claims_total", {"outcome": "full"}) == 9
        assert bots.metric("bot_max_seats") == MAX_SEATS
        warnings = [
            record
            for record in caplog.records
            if record.levelno == logging.WARNING and "seats wait" in record.getMessage()
        ]
        assert len(warnings) == 1, "one line when the shortage starts, not one per seat"
        assert warnings[0].__dict__["max_seats"] == MAX_SEATS

        # One of mallory's games ends and frees three seats: alice holds none of her share of
        # three (six seats, two creators) and mallory holds three, so alice's table goes first.
        await play_seat(mallory, playing[0], 0, random.Random(1))
        await eventually(lambda: _tables_held(bots) == sorted([playing[1], guest] * 3))
        assert _tables_waiting(bots) == [*[flooded[0]] * 3, *[flooded[1]] * 3]
        await eventually(lambda: bots.metric("bot_seats_waiting") == 6)
        assert bots.metric("bot_seat_wait_seconds_count", {"outcome": "taken"}) == 3

        # Alice's game ends: only mallory waits now, and her longest-waiting table goes next.
        await play_seat(alice, guest, 0, random.Random(2))
        await eventually(lambda: _tables_held(bots) == sorted([playing[1], flooded[0]] * 3))
        assert _tables_waiting(bots) == [flooded[1]] * 3
        await eventually(lambda: bots.metric("bot_seats_waiting") == 3)
        assert bots.metric("bot_seat_wait_seconds_count", {"outcome": "taken"}) == 6

        guest_moves = [action for action in actions_of(await table_log(cluster, guest))]
        bot_moves = [action for action in guest_moves if action.seat != 0]
        assert len(bot_moves) == 3 * 14
        assert {action.actor_id for action in bot_moves} == {bots.actor_id}
        waiting_table = actions_of(await table_log(cluster, flooded[1]))
        assert bots.actor_id not in {action.actor_id for action in waiting_table}
