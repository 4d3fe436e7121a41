"""The scoring projection against real servers: a stream per test, a database per test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import asyncpg
import pytest
from prometheus_client import CollectorRegistry

from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.consumer import ProjectionConsumer
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.rebuild import PROJECTION_TABLES
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable.scoring_service.writer import ProjectionWriter, read_position
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.scoring_service.event_log import create_event_stream

SCHEMA = "scoring"


@pytest.fixture
async def log_names(nats_connection: NatsConnection, nats_namespace: NatsNamespace) -> LogNames:
    """This test's events stream, created empty."""
    names = LogNames.from_prefix(nats_namespace.prefix)
    await create_event_stream(nats_connection.jetstream, names)
    return names


@pytest.fixture
async def projection_pool(fresh_database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on this test's database, its ``scoring`` schema migrated."""
    pool = await create_schema_pool(fresh_database_url, SCHEMA, connect_timeout_seconds=10)
    async with pool.acquire() as connection:
        await apply_migrations(connection, SCHEMA)
    yield pool
    await close_pool(pool)


@pytest.fixture
def consumer_settings(log_names: LogNames) -> ConsumerSettings:
    return ConsumerSettings(
        log=log_names,
        consumer_name="scoring",
        schema=SCHEMA,
        batch_size=256,
        ack_wait_seconds=2.0,
    )


class RunningConsumer:
    """A live projection consumer on a task of its own."""

    def __init__(self, consumer: ProjectionConsumer, task: asyncio.Task[None]) -> None:
        self.consumer = consumer
        self.task = task

    async def stop(self) -> None:
        self.consumer.stop()
        await asyncio.wait_for(self.task, 30)


@asynccontextmanager
async def running_consumer(
    nats: NatsConnection,
    pool: asyncpg.Pool,
    settings: ConsumerSettings,
    registry: CollectorRegistry | None = None,
    **overrides: object,
) -> AsyncIterator[RunningConsumer]:
    """Run the consumer until the block ends (it is stopped cleanly then)."""
    settings = replace(settings, **overrides)  # type: ignore[arg-type]
    consumer = ProjectionConsumer(
        nats.jetstream,
        ProjectionWriter(pool, settings.log, CommittedState.for_live_consumer(), settings.verifier),
        settings,
        ProjectionMetrics(registry or CollectorRegistry()),
        reader=SequenceReader(nats.client, settings.log.stream),
    )
    running = RunningConsumer(consumer, asyncio.create_task(consumer.run()))
    try:
        yield running
    finally:
        if not running.task.done():
            await running.stop()
        else:
            running.task.result()


async def wait_for_position(
    pool: asyncpg.Pool, stream: str, sequence: int, timeout_seconds: float = 60.0
) -> None:
    """Wait until the projection has committed up to ``sequence``."""
    deadline = time.monotonic() + timeout_seconds
    position = 0
    while time.monotonic() < deadline:
        try:
            position = await read_position(pool, stream)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            position = -1
        if position >= sequence:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"projection stuck at {position}, expected {sequence}")


async def snapshot(pool: asyncpg.Pool, *, with_position: bool = False) -> dict[str, list[str]]:
    """Every projection row as text, table by table, in a stable order."""
    tables = [t for t in PROJECTION_TABLES if with_position or t != "projection_position"]
    return {
        table: [
            r["row"] for r in await pool.fetch(f"SELECT t::text AS row FROM {table} t ORDER BY 1")
        ]
        for table in tables
    }
