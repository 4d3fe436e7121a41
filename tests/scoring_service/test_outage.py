"""PostgreSQL stopped and started again while events keep coming, or while the projection is
rebuilt: nothing is lost, and both end with the rows a rebuild in one go has.

The test runs its own embedded PostgreSQL so that stopping it disturbs no other test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from prometheus_client import CollectorRegistry

from cardtable.platform.nats import NatsConnection
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.rebuild import RebuildProgress, compare_projections, rebuild
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_tools.servers.dev_servers import DevServers, async_dev_servers
from cardtable_tools.servers.server_process import DevServer
from tests.scoring_service.conftest import SCHEMA, running_consumer, wait_for_position
from tests.scoring_service.event_log import TableLog, interleave, people, publish


@pytest.fixture
async def own_postgres() -> AsyncIterator[DevServers]:
    async with async_dev_servers(nats=False, postgres=True) as servers:
        yield servers


async def test_the_projection_catches_up_after_postgres_comes_back(
    nats_connection: NatsConnection,
    consumer_settings: ConsumerSettings,
    own_postgres: DevServers,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    database_url = own_postgres.database_url
    postgres = own_postgres.postgres
    assert postgres is not None
    batches = interleave(
        [
            TableLog("whist", people("ann", "bob", "cy"), seed=81).play(),
            TableLog("belote", people("ann", "bob", "cy", "dee"), seed=82).play(),
            TableLog("hearts", people("eve", "fay", "gus", "hal"), seed=83).play(),
        ]
    )
    thirds = len(batches) // 3
    pool = await create_schema_pool(database_url, SCHEMA, connect_timeout_seconds=10)
    registry = CollectorRegistry()
    try:
        async with pool.acquire() as connection:
            await apply_migrations(connection, SCHEMA)
        async with running_consumer(nats_connection, pool, consumer_settings, registry):
            first = await publish(js, names, batches[:thirds])
            await wait_for_position(pool, names.stream, first[-1])

            await postgres.stop_async()
            await publish(js, names, batches[thirds : 2 * thirds])  # the log keeps growing
            await asyncio.sleep(1.5)  # the consumer fails and retries meanwhile
            await postgres.start_async()
            last = await publish(js, names, batches[2 * thirds :])

            await wait_for_position(pool, names.stream, last[-1])
        retries = registry.get_sample_value("scoring_projection_retries_total") or 0
        assert retries >= 1

        # Nothing lost, nothing twice: the same rows as a projection built in one go.
        await rebuild(database_url, js, names, schema="scoring_rebuild")
        async with pool.acquire() as connection:
            comparison = await compare_projections(connection, SCHEMA, "scoring_rebuild")
        assert [c.table for c in comparison if not c.identical] == []
        assert await pool.fetchval("SELECT count(*) FROM rating_changes") == 11
    finally:
        await close_pool(pool)


class PoolWithABrokenConnection:
    """The real pool, except that the next ``acquire`` (once armed) hands out a connection in
    a state no query can run in, as asyncpg once did after a PostgreSQL restart under load."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self.armed = False
        self.expired = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def acquire(self) -> Any:
        if self.armed:
            self.armed = False
            return BrokenConnection()
        return self._pool.acquire()

    async def expire_connections(self) -> None:
        self.expired += 1
        await self._pool.expire_connections()


class BrokenConnection:
    async def __aenter__(self) -> None:
        raise asyncpg.InternalClientError(
            "cannot switch to state 15; another operation (2) is in progress"
        )

    async def __aexit__(self, *exc_info: object) -> None:
        return None


async def test_a_connection_in_an_impossible_state_is_replaced_and_the_projection_goes_on(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    batches = interleave(
        [
            TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=91).play(),
            TableLog("whist", people("eve", "fay", "gus"), seed=92).play(),
        ]
    )
    half = len(batches) // 2
    pool = PoolWithABrokenConnection(projection_pool)
    registry = CollectorRegistry()
    async with running_consumer(nats_connection, pool, consumer_settings, registry) as running:  # type: ignore[arg-type]
        first = await publish(js, names, batches[:half])
        await wait_for_position(projection_pool, names.stream, first[-1])
        pool.armed = True
        rest = await publish(js, names, batches[half:])
        await wait_for_position(projection_pool, names.stream, rest[-1])
        assert not running.task.done()  # the consumer lived through it
    assert not pool.armed and pool.expired == 1
    assert (registry.get_sample_value("scoring_projection_retries_total") or 0) >= 1
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def test_a_rebuild_outlives_postgres_restarting_under_it(
    nats_connection: NatsConnection,
    consumer_settings: ConsumerSettings,
    own_postgres: DevServers,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    database_url = own_postgres.database_url
    postgres = own_postgres.postgres
    assert postgres is not None
    batches = interleave(
        [
            TableLog("whist", people("ann", "bob", "cy"), seed=71).play(),
            TableLog("hearts", people("eve", "fay", "gus", "hal"), seed=72).play(),
        ]
    )
    await publish(js, names, batches)
    pool = await create_schema_pool(database_url, SCHEMA, connect_timeout_seconds=10)
    try:
        async with pool.acquire() as connection:
            await apply_migrations(connection, SCHEMA)
        async with running_consumer(nats_connection, pool, consumer_settings):
            await wait_for_position(pool, names.stream, len(batches))
        restarts: list[asyncio.Task[None]] = []

        def restart_once(progress: RebuildProgress) -> None:
            # After the first committed transaction, PostgreSQL goes away (synchronously, so
            # that the rebuild's next transaction finds it gone) and comes back a second later.
            if not restarts:
                postgres.stop()
                restarts.append(asyncio.create_task(start_later(postgres, 1.0)))

        result = await rebuild(
            database_url,
            js,
            names,
            schema="scoring_rebuild",
            messages_per_transaction=7,
            on_progress=restart_once,
        )
        await asyncio.gather(*restarts)

        assert restarts and result.position == len(batches)
        async with pool.acquire() as connection:
            comparison = await compare_projections(connection, SCHEMA, "scoring_rebuild")
        assert [c.table for c in comparison if not c.identical] == []
    finally:
        await close_pool(pool)


async def start_later(postgres: DevServer, seconds: float) -> None:
    await asyncio.sleep(seconds)
    await postgres.start_async()
