"""The view a move brought along is the view the rules service would compute, always.

Replica A makes every move, so it answers the next player's GetTable from the views that came
with the move; replica B only reads the log, so it asks the rules service each time. The two
must agree on every view and status, through deals (where the cached views are dropped) and
games with several seats to act at once (Hearts passing).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardtable_api.rules.v1 import rules_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import pick_action, running_table_service


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [("hearts", 4, {"quick": "true"}), ("whist", 3, {}), ("belote", 4, {})],
)
async def test_views_from_the_move_equal_the_views_a_second_replica_computes(
    nats_url: str,
    nats_namespace: NatsNamespace,
    rules_address: str,
    game: str,
    seats: int,
    options: dict[str, str],
) -> None:
    rng = random.Random(f"cached-{game}")
    async with (
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as mover,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as reader,
    ):
        asked_for_seats: list[int] = []
        rules = mover.parts.app.rules
        plain_get_view = rules.get_view

        async def counting_get_view(request: rules_pb2.GetViewRequest) -> Any:
            if request.HasField("seat"):
                asked_for_seats.append(request.seat)
            return await plain_get_view(request)

        rules.get_view = counting_get_view  # type: ignore[method-assign]
        compared = 0
        # A random Belote deal can end the game at once (a solo capot scores 512), so a short
        # game is followed by another table until enough views have been compared.
        for table_number in range(5):
            if compared > 50:
                break
            table_id = await mover.player("host").create(game, seats, options)
            names = [f"p{table_number}-{seat}" for seat in range(seats)]
            on_mover = {seat: mover.player(name) for seat, name in enumerate(names)}
            on_reader = {seat: reader.player(name) for seat, name in enumerate(names)}
            for seat, player in on_mover.items():
                await player.join(table_id, seat)
            for _ in range(120):
                summary = await on_mover[0].view(table_id, None)
                if summary.status == "finished":
                    break
                for seat in summary.game_status.to_act:
                    cached = await on_mover[seat].view(table_id, seat)
                    computed = await on_reader[seat].view(table_id, seat)
                    assert cached.version == computed.version
                    assert cached.seat_view == computed.seat_view, (
                        f"seat {seat} at {cached.version}"
                    )
                    assert cached.game_status == computed.game_status
                    compared += 1
                seat = rng.choice(list(summary.game_status.to_act))
                view = (await on_mover[seat].view(table_id, seat)).seat_view
                await on_mover[seat].move(table_id, seat, pick_action(view, rng))
        assert compared > 50
        # the mover asked the rules service only after deals (and the first view of a seat)
        assert len(asked_for_seats) < compared / 3


async def test_min_version_answers_from_the_cache_and_zero_reads_the_log(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    """Replica B has seen version v; A then moves. B answers a view at least v from its cache
    (so without the log it cannot know of A's move), one at least v+1 or with no minimum from
    the log."""
    async with (
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as a,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as b,
    ):
        table_id = await a.player("host").create("hearts", 4, {"quick": "true"})
        players_on_a = {seat: a.player(f"min{seat}") for seat in range(4)}
        for seat, player in players_on_a.items():
            await player.join(table_id, seat)
        on_b = b.player("min0")
        seen = await on_b.view(table_id, 0)
        action = pick_action((await players_on_a[0].view(table_id, 0)).seat_view, random.Random(3))
        moved = await players_on_a[0].move(table_id, 0, action)
        assert moved.version == seen.version + 1

        def request(min_version: int) -> table_pb2.GetTableRequest:
            return table_pb2.GetTableRequest(table_id=table_id, seat=0, min_version=min_version)

        cached = await on_b.stub.GetTable(request(seen.version), metadata=on_b.metadata)
        assert cached.version == seen.version and cached.seat_view == seen.seat_view
        newer = await on_b.stub.GetTable(request(moved.version), metadata=on_b.metadata)
        assert newer.version == moved.version
        assert newer.seat_view.hearts.passes_chosen[0] is True
        # Back on B's cache, now current; a fresh read of a table nobody changed agrees.
        assert (await on_b.stub.GetTable(request(0), metadata=on_b.metadata)) == newer
        # A version beyond the log's last is answered with the log's last.
        beyond = await on_b.stub.GetTable(request(moved.version + 5), metadata=on_b.metadata)
        assert beyond.version == moved.version
