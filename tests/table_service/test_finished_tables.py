"""Finished tables leave memory beyond a bound, and are rebuilt from the log when read."""

from __future__ import annotations

from tests.table_service.harness import Cluster, Player


async def _finished_whist(cluster: Cluster, name: str) -> tuple[str, list[Player]]:
    """A Whist table whose game ended early: two of its three people left."""
    players = [cluster.player(f"{name}-{seat}") for seat in range(3)]
    table_id = await players[0].create("whist", 3)
    for seat, player in enumerate(players):
        await player.join(table_id, seat)
    await players[1].leave(table_id)
    await players[2].leave(table_id)
    return table_id, players


async def test_the_oldest_finished_tables_leave_memory_and_come_back_from_the_log(
    cluster: Cluster,
) -> None:
    app = cluster.parts.app
    app.finished_cache_size = 1
    running = [cluster.player(f"running-{seat}") for seat in range(3)]
    running_id = await running[0].create("whist", 3)
    for seat, player in enumerate(running):
        await player.join(running_id, seat)

    first, players = await _finished_whist(cluster, "first")
    before = await players[0].view(first, 0)
    assert before.status == "finished" and app.is_cached(first)
    second, _ = await _finished_whist(cluster, "second")

    assert not app.is_cached(first)  # one finished table is kept: the latest
    assert app.is_cached(second)
    assert app.is_cached(running_id)  # a game in play is not a finished table
    after = await players[0].view(first, 0)  # rebuilt from its subject
    assert after.status == "finished"
    assert after.version == before.version
    assert after.game_status == before.game_status
    assert app.is_cached(first) and not app.is_cached(second)
