"""The scoring benchmark: events projected per second, beside plain inserts into the same database.

Issue #5 asks for the projection's rates, live and rebuilding, beside what the same PostgreSQL
takes as plain batched inserts of the same events, all measured in one run so that the ratios
say something about the projection rather than the machine. The steps, each timed alone:

1. a log of ``games`` tables is appended to a fresh stream, as the table service appends it
   (one message per command, its headers, interleaved as concurrent tables play);
2. **plain**: every event of that log inserted as a row ``(sequence, table_id, event)`` with
   ``executemany`` in transactions of 5,000 rows (the yardstick issue #5 names), and the same
   rows through ``COPY`` for comparison;
3. **rebuild**: :func:`cardtable.scoring_service.rebuild.rebuild` of the whole log;
4. **live**: the scoring service's consumer, with its default settings, catching up from the
   start of the log.

Then the two projections are compared row for row: both are folds of the same log. Last, unless
``lag_seconds`` is 0, the projection lag at a paced load (:mod:`cardtable_tools.bench.scoring_lag`):
the scoring service as a process, fed ``lag_rate`` messages a second from a log of the same pool.

The log (:mod:`cardtable_tools.bench.scoring_log`) is re-emitted from a pool of engine games:
byte for byte what the table service would have written for them. ``quick`` (the default) makes most
tables Hearts quick games (one deal); the output says which mix was used.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import asyncpg
from prometheus_client import CollectorRegistry

from cardtable.eventlog.store import EventStore
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchSigner, BatchVerifier
from cardtable.platform.nats import connect_nats
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.consumer import ProjectionConsumer
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.rebuild import compare_projections, rebuild
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable.scoring_service.writer import ProjectionWriter, read_position
from cardtable_tools.bench.scoring_lag import (
    TARGET_MESSAGES_PER_S,
    format_lag,
    lag_messages,
    projection_lag_at_rate,
)
from cardtable_tools.bench.scoring_log import (
    FULL_MIX,
    QUICK_MIX,
    TABLES_AT_ONCE,
    Progress,
    append_log,
    game_pool,
    log_messages,
    log_schedule,
)
from cardtable_tools.servers.dev_servers import async_dev_servers
from cardtable_tools.simulation.event_log import TableCopy, TableTemplate

#: The yardstick's transaction size (issue #5).
PLAIN_ROWS_PER_TRANSACTION = 5000


@dataclass
class Servers:
    """Where the benchmark's NATS and PostgreSQL are."""

    nats_url: str
    database_url: str
    source: str


@contextlib.asynccontextmanager
async def bench_servers() -> AsyncIterator[Servers]:
    """``NATS_URL`` / ``DATABASE_URL`` when set, the embedded wheel servers for the others."""
    nats_url, database_url = os.environ.get("NATS_URL"), os.environ.get("DATABASE_URL")
    if nats_url and database_url:
        yield Servers(nats_url, database_url, "NATS_URL and DATABASE_URL")
        return
    async with async_dev_servers(nats=not nats_url, postgres=not database_url) as servers:
        yield Servers(
            nats_url or servers.nats_url,
            database_url or servers.database_url,
            "embedded wheel servers" if not (nats_url or database_url) else "partly embedded",
        )


@contextlib.asynccontextmanager
async def fresh_database(server_url: str) -> AsyncIterator[str]:
    """A new empty database on the server, dropped afterwards; yields its URL."""
    name = f"bench_scoring_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(server_url)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        try:
            yield urlsplit(server_url)._replace(path=f"/{name}").geturl()
        finally:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


async def publish_log(
    nats_url: str,
    names: LogNames,
    schedule: Iterator[tuple[TableCopy, int]],
    messages: int,
    progress: Progress,
    signer: BatchSigner | None = None,
) -> int:
    """Append the log to a new stream, acks awaited in windows; returns the last sequence.
    With ``signer``, signed and chained as the table service writes it."""
    connection = await connect_nats(nats_url, name="bench-scoring-publisher")
    try:
        js = connection.jetstream
        await EventStore(js, names).ensure_stream()
        log = log_messages(schedule, names, signer)
        return await append_log(
            js, names, log, messages, progress, "appending the log to JetStream"
        )
    finally:
        await connection.close()


def plain_rows(
    schedule: Iterator[tuple[TableCopy, int]], size: int
) -> Iterator[list[tuple[int, str, bytes]]]:
    """The log's events as plain rows ``(sequence, table_id, event)``, ``size`` at a time."""
    rows: list[tuple[int, str, bytes]] = []
    for sequence, (copy, index) in enumerate(schedule, start=1):
        rows.extend((sequence, copy.table_id, event) for event in copy.events(index))
        if len(rows) >= size:
            yield rows[:size]
            rows = rows[size:]
    if rows:
        yield rows


async def plain_insert_rates(
    database_url: str, pool: list[TableTemplate], games: int, events: int, progress: Progress
) -> dict[str, float]:
    """Rows per second through ``executemany`` (5,000 a transaction) and through ``COPY``.

    Only the database calls are timed: the rows are made between them, as the projection's
    rows are made while it does not wait for the database.
    """
    connection = await asyncpg.connect(database_url)
    rates: dict[str, float] = {}
    try:
        for method in ("executemany", "copy"):
            table = f"plain_events_{method}"
            await connection.execute(
                f"CREATE TABLE {table} (sequence bigint, table_id text, event bytea)"
            )
            spent = 0.0
            done = 0
            step = f"plain inserts ({method})"
            for chunk in plain_rows(log_schedule(pool, games), PLAIN_ROWS_PER_TRANSACTION):
                started = time.perf_counter()
                async with connection.transaction():
                    if method == "executemany":
                        await connection.executemany(
                            f"INSERT INTO {table} VALUES ($1, $2, $3)", chunk
                        )
                    else:
                        await connection.copy_records_to_table(table, records=chunk)
                spent += time.perf_counter() - started
                done += len(chunk)
                progress(step, done, events)
            rates[method] = done / spent
            await connection.execute(f"DROP TABLE {table}")
    finally:
        await connection.close()
    return rates


async def live_rate(
    nats_url: str,
    database_url: str,
    names: LogNames,
    last_sequence: int,
    events: int,
    progress: Progress,
    verifier: BatchVerifier | None = None,
) -> float:
    """Events per second of the live consumer (default settings) catching up on the log,
    each batch's signature and chain checked with ``verifier`` as in production."""
    settings = ConsumerSettings(
        log=names, consumer_name="scoring", schema="scoring", batch_size=256, ack_wait_seconds=30.0
    )
    db_pool = await create_schema_pool(database_url, settings.schema)
    connection = await connect_nats(nats_url, name="bench-scoring-live")
    try:
        async with db_pool.acquire() as db:
            await apply_migrations(db, settings.schema)
        consumer = ProjectionConsumer(
            connection.jetstream,
            ProjectionWriter(db_pool, names, CommittedState.for_live_consumer(), verifier),
            settings,
            ProjectionMetrics(CollectorRegistry()),
            reader=SequenceReader(connection.client, names.stream),
        )
        started = time.perf_counter()
        task = asyncio.create_task(consumer.run())
        try:
            while (position := await read_position(db_pool, names.stream)) < last_sequence:
                if task.done():
                    task.result()
                    raise RuntimeError("the consumer stopped before catching up")
                progress("live consumer catching up", position, last_sequence)
                await asyncio.sleep(0.2)
            seconds = time.perf_counter() - started
            progress("live consumer catching up", last_sequence, last_sequence)
        finally:
            consumer.stop()
            await asyncio.wait_for(task, 60)
        return events / seconds
    finally:
        await connection.close()
        await close_pool(db_pool)


async def projections_identical(database_url: str, progress: Progress) -> bool:
    """Whether the rebuilt projection equals the live one, row for row."""
    progress("comparing rebuild and live", 0, 1)
    connection = await asyncpg.connect(database_url)
    try:
        comparisons = await compare_projections(connection, "scoring", "scoring_rebuild")
    finally:
        await connection.close()
    progress("comparing rebuild and live", 1, 1)
    return all(comparison.identical for comparison in comparisons)


async def scoring_rates(
    *,
    games: int,
    progress: Progress,
    quick: bool = True,
    lag_rate: float = TARGET_MESSAGES_PER_S,
    lag_seconds: float = 0.0,
) -> dict[str, Any]:
    """Run the whole benchmark (module docstring) and return its figures, JSON-able.

    The lag is measured after the rates, on servers of its own, so that nothing else runs
    meanwhile; with ``lag_seconds`` 0 it is skipped and its figures are None.
    """
    if lag_seconds > 0:
        lag_messages(lag_rate, lag_seconds)  # a bad rate fails now, not after the rates
    began = time.perf_counter()
    mix = QUICK_MIX if quick else FULL_MIX
    pool = game_pool(mix, progress)
    messages = events = 0
    for copy, index in log_schedule(pool, games):
        messages += 1
        events += len(copy.template.events[index])
    names = LogNames.from_prefix(f"BENCH{secrets.token_hex(3).upper()}")
    async with bench_servers() as servers, fresh_database(servers.database_url) as database_url:
        # Signed and verified as in production: checking each batch is part of the cost.
        signer = BatchSigner.generate()
        verifier = BatchVerifier([signer.public_key])
        last_sequence = await publish_log(
            servers.nats_url, names, log_schedule(pool, games), messages, progress, signer
        )
        plain = await plain_insert_rates(database_url, pool, games, events, progress)

        connection = await connect_nats(servers.nats_url, name="bench-scoring-rebuild")
        try:
            rebuilt = await rebuild(
                database_url,
                connection.jetstream,
                names,
                schema="scoring_rebuild",
                on_progress=lambda step: progress("rebuild", step.position, last_sequence),
                reader_nats_url=servers.nats_url,
                verifier=verifier,
            )
            live = await live_rate(
                servers.nats_url, database_url, names, last_sequence, events, progress, verifier
            )
            identical = await projections_identical(database_url, progress)
            await connection.jetstream.delete_stream(names.stream)
        finally:
            await connection.close()
    if rebuilt.events != events:
        raise RuntimeError(f"the rebuild projected {rebuilt.events} events of {events}")
    lag = None
    if lag_seconds > 0:
        lag = await projection_lag_at_rate(lag_rate, lag_seconds, progress, pool=pool)
    batched = plain["executemany"]
    return {
        "games": games,
        "mix": mix.description,
        "tables_at_once": TABLES_AT_ONCE,
        "messages": messages,
        "events": events,
        "servers": servers.source,
        "plain_rows_per_s": {"executemany_5000": round(batched), "copy": round(plain["copy"])},
        "rebuild_events_per_s": round(rebuilt.events_per_second),
        "rebuild_vs_plain": round(rebuilt.events_per_second / batched, 3),
        "rebuild_vs_copy": round(rebuilt.events_per_second / plain["copy"], 3),
        "live_events_per_s": round(live),
        "live_vs_plain": round(live / batched, 3),
        "rebuild_equals_live": identical,
        "lag_at_target_load": lag,
        "wall_seconds": round(time.perf_counter() - began, 1),
    }


def format_report(figures: dict[str, Any]) -> str:
    """The figures as the lines a person reads, ratios beside each rate."""
    plain = figures["plain_rows_per_s"]
    return "\n".join(
        [
            f"{figures['games']:,} games, {figures['messages']:,} messages, "
            f"{figures['events']:,} events ({figures['mix']}; "
            f"{figures['tables_at_once']} tables in play at once)",
            f"  plain batched inserts  {plain['executemany_5000']:>10,} rows/s "
            "(executemany, 5,000 rows a transaction)",
            f"  plain COPY             {plain['copy']:>10,} rows/s",
            f"  rebuild                {figures['rebuild_events_per_s']:>10,} events/s "
            f"({figures['rebuild_vs_plain']:.2f} of plain batched inserts, "
            f"{figures['rebuild_vs_copy']:.2f} of COPY)",
            f"  live, catching up      {figures['live_events_per_s']:>10,} events/s "
            f"({figures['live_vs_plain']:.2f} of plain batched inserts)",
            f"  rebuild equals live row for row: {figures['rebuild_equals_live']}",
            *(format_lag(figures["lag_at_target_load"]) if figures["lag_at_target_load"] else []),
            f"  wall time {figures['wall_seconds']:,.1f} s ({figures['servers']})",
        ]
    )
