"""How fast the projection goes, beside plain batched inserts into the same PostgreSQL.

Run it alone to see the figures: ``pytest tests/scoring_service/test_speed.py -s``. The
assertion is loose on purpose (the machine may be busy); it catches a projection that went
back to a transaction per message, not a few percent.
"""

from __future__ import annotations

import random
import time

import asyncpg
import pytest

from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.rebuild import rebuild
from cardtable.scoring_service.settings import ConsumerSettings
from tests.scoring_service.conftest import running_consumer, wait_for_position
from tests.scoring_service.event_log import TableLog, bot, interleave, people, publish

GAMES = 40


def many_games() -> list[TableLog]:
    players = [*people(*[f"p{index}" for index in range(12)]), bot("robo")]
    rng = random.Random(5)
    logs = []
    for index in range(GAMES):
        game = ("whist", "358", "belote", "hearts")[index % 4]
        seated = rng.sample(players, 3 if game == "358" else 4)
        logs.append(TableLog(game, seated, seed=1000 + index).play())
    return logs


@pytest.mark.slow
async def test_projection_rates_beside_plain_batched_inserts(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    batches = interleave(many_games())
    events = sum(len(batch.events) for batch in batches)
    sequences = await publish(js, names, batches, expect_last_sequence=False)

    rows = [
        (sequence, batch.table_id, event.SerializeToString())
        for sequence, batch in zip(sequences, batches, strict=True)
        for event in batch.events
    ]
    await projection_pool.execute(
        "CREATE TABLE public.plain_events (sequence bigint, table_id text, event bytea)"
    )
    started = time.perf_counter()
    async with projection_pool.acquire() as connection:
        for start in range(0, len(rows), 5000):
            async with connection.transaction():
                await connection.executemany(
                    "INSERT INTO public.plain_events VALUES ($1, $2, $3)",
                    rows[start : start + 5000],
                )
    plain = len(rows) / (time.perf_counter() - started)

    rebuilt = await rebuild(fresh_database_url, js, names, schema="scoring_rebuild")

    started = time.perf_counter()
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, names.stream, sequences[-1])
    live = events / (time.perf_counter() - started)

    print(
        f"\n{GAMES} games, {len(batches)} batches, {events} events:"
        f"\n  plain batched inserts  {plain:10,.0f} rows/s"
        f"\n  rebuild                {rebuilt.events_per_second:10,.0f} events/s"
        f" ({rebuilt.events_per_second / plain:.2f} of plain)"
        f"\n  live, catching up      {live:10,.0f} events/s ({live / plain:.2f} of plain)"
    )
    assert rebuilt.events == events
    assert rebuilt.events_per_second > plain / 10
