"""Rebuild: the whole log projected again into a fresh schema equals the live projection."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import asyncpg
import pytest
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service import row_writes
from cardtable.scoring_service.aligned_comparison import compare_at_same_position
from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.consumer import ProjectionConsumer
from cardtable.scoring_service.log_reading import read_log_elsewhere
from cardtable.scoring_service.messages import StoredMessage
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.rebuild import RebuildProgress, compare_projections, rebuild
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable.scoring_service.writer import ProjectionWriter, StreamReplacedError, read_position
from cardtable_api.events.v1 import events_pb2
from tests.scoring_service.conftest import SCHEMA, running_consumer, wait_for_position
from tests.scoring_service.event_log import (
    TableLog,
    bot,
    create_event_stream,
    interleave,
    people,
    publish,
)

REBUILT = "scoring_rebuild"


def many_tables() -> list[TableLog]:
    players = [*people("ann", "bob", "cy", "dee", "eve"), bot("robo")]
    logs = []
    for seed in range(8):
        game = ["whist", "358", "belote", "hearts"][seed % 4]
        seats = 3 if game == "358" else 4
        chosen = [players[(seed + offset) % len(players)] for offset in range(seats)]
        log = TableLog(
            game,
            chosen,
            seed=100 + seed,
            options={"quick": "true"} if seed == 3 else {},
            # recorded once; the other logs predate the field, and read as rated
            rated=True if seed == 1 else None,
        )
        log.open_and_start()
        log.play_deals(3)
        if seed == 0:
            log.leave(1)
        log.play_to_end()
        logs.append(log)
    unrated = TableLog("belote", players[:4], seed=140, rated=False).play()
    unfinished = TableLog("whist", people("fay", "gus", "hal"), seed=120)
    unfinished.open_and_start()
    unfinished.play_deals(2)
    return [*logs, unrated, unfinished]


@pytest.mark.parametrize(
    ("second_process", "per_transaction", "copy_from_rows"),
    [(False, 500, None), (True, 500, None), (True, 7, None), (False, 500, 1)],
    ids=["read here", "read elsewhere", "many short transactions", "every write a COPY"],
)
async def test_a_rebuild_equals_the_live_projection_table_by_table(
    nats_connection: NatsConnection,
    nats_url: str,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
    second_process: bool,
    per_transaction: int,
    copy_from_rows: int | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Short transactions carry tables and ratings over many commits in the rebuild's memory
    (committed_state.py); the orphan batch fails inside a fold, which makes it forget them.
    Rows written by COPY through staging tables (row_writes) land as the upserts write them."""
    js, names = nats_connection.jetstream, consumer_settings.log
    logs = many_tables()
    batches = interleave(logs)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await publish(js, names, batches)
        # A poison message and a batch stored twice belong to the log too.
        await js.publish(names.table_subject(logs[0].table_id), b"\x00garbage")
        orphan = TableLog("hearts", people("ivy", "jo", "kim", "lu"), seed=130)
        orphan.open_and_start()
        await publish(js, names, orphan.batches[1:2], expect_last_sequence=False)
        last = await publish(
            js, names, logs[1].batches[-3:], message_ids=False, expect_last_sequence=False
        )
        await wait_for_position(projection_pool, names.stream, last[-1])

    forgotten: list[int] = []
    forget = CommittedState.forget

    def counted_forget(state: CommittedState) -> None:
        forgotten.append(len(state.tables))
        forget(state)

    monkeypatch.setattr(CommittedState, "forget", counted_forget)
    if copy_from_rows is not None:
        monkeypatch.setattr(row_writes, "COPY_FROM_ROWS", copy_from_rows)
    progress: list[RebuildProgress] = []
    result = await rebuild(
        fresh_database_url,
        js,
        names,
        schema=REBUILT,
        on_progress=progress.append,
        messages_per_transaction=per_transaction,
        reader_nats_url=nats_url if second_process else None,
    )

    assert result.position == last[-1]
    assert result.messages == len(batches) + 5
    assert result.dead_letters == 2
    assert forgotten  # the orphan's fold failed: what memory held was dropped, then reread
    assert [p.position for p in progress] == sorted(p.position for p in progress)
    assert progress[-1].position == progress[-1].last_sequence == last[-1]
    async with projection_pool.acquire() as connection:
        comparison = await compare_projections(connection, SCHEMA, REBUILT)
    assert [c.table for c in comparison if not c.identical] == []
    rows = {c.table: c.rows_in_first for c in comparison}
    # the unrated game's row and results are there, and no rating change of it
    assert rows["games"] == 10 and rows["dead_letters"] == 2 and rows["rating_changes"] == 30
    assert all(c.rows_in_first == c.rows_in_second for c in comparison)


async def test_the_comparison_names_the_rows_that_differ(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    log = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=3).play()
    await publish(js, names, log.batches)
    await rebuild(fresh_database_url, js, names, schema=SCHEMA)
    await rebuild(fresh_database_url, js, names, schema=REBUILT)
    await projection_pool.execute(
        f"UPDATE {REBUILT}.ratings SET rating = rating + 1 WHERE player_id = 'ann'"
    )
    await projection_pool.execute(f"DELETE FROM {REBUILT}.deal_seats WHERE deal_number = 1")

    async with projection_pool.acquire() as connection:
        comparison = {c.table: c for c in await compare_projections(connection, SCHEMA, REBUILT)}

    assert {table for table, c in comparison.items() if not c.identical} == {
        "ratings",
        "deal_seats",
    }
    assert (comparison["ratings"].only_in_first, comparison["ratings"].only_in_second) == (1, 1)
    assert (comparison["deal_seats"].only_in_first, comparison["deal_seats"].only_in_second) == (
        4,
        0,
    )
    assert any("(ann,hearts," in example for example in comparison["ratings"].examples)


async def test_rebuilding_the_live_schema_in_place_lets_the_consumer_go_on(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    first = TableLog("whist", people("ann", "bob", "cy"), seed=4).play()
    second = TableLog("belote", people("ann", "bob", "cy", "dee"), seed=5).play()
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        done = await publish(js, names, first.batches)
        await wait_for_position(projection_pool, names.stream, done[-1])

    # Operators stop the consumer, rebuild the schema itself, and start it again.
    await rebuild(fresh_database_url, js, names, schema=SCHEMA)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        done = await publish(js, names, second.batches)
        await wait_for_position(projection_pool, names.stream, done[-1])

    await rebuild(fresh_database_url, js, names, schema=REBUILT)
    async with projection_pool.acquire() as connection:
        comparison = await compare_projections(connection, SCHEMA, REBUILT)
    assert [c.table for c in comparison if not c.identical] == []
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def test_rebuilding_an_empty_log(
    nats_connection: NatsConnection,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
    projection_pool: asyncpg.Pool,
) -> None:
    result = await rebuild(
        fresh_database_url, nats_connection.jetstream, consumer_settings.log, schema=REBUILT
    )
    assert (result.position, result.messages, result.events) == (0, 0, 0)
    assert await projection_pool.fetchval(f"SELECT count(*) FROM {REBUILT}.games") == 0


def test_event_batches_of_the_fixture_log_are_whole() -> None:
    """The fixture writer's own invariants, so the tests above rest on a sound log."""
    log = TableLog("belote", people("ann", "bob", "cy", "dee"), seed=9).play()
    versions = [batch.table_version for batch in log.batches]
    assert versions == list(range(1, len(log.batches) + 1))
    bodies = [event.WhichOneof("body") for batch in log.batches for event in batch.events]
    assert bodies[0] == "table_created" and bodies[-1] == "game_finished"
    assert bodies.count("deal_committed") == bodies.count("deal_seed_revealed")
    assert isinstance(log.batches[0], events_pb2.EventBatch)


async def test_a_reader_process_that_fails_says_why(nats_url: str) -> None:
    missing = LogNames.from_prefix("NO_SUCH_LOG")
    with pytest.raises(RuntimeError, match="the log reader failed"):
        async for _chunk in read_log_elsewhere(nats_url, missing, until=10, chunk=5):
            pass


async def test_a_live_writer_that_another_writer_overtook_reads_the_schema_again(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    log_names: LogNames,
    fresh_database_url: str,
) -> None:
    """Two live writers take turns on one schema (a second consumer started by mistake, say):
    each finds tables and ratings the other changed, and the schema still equals a rebuild."""
    js = nats_connection.jetstream
    sequences = await publish(js, log_names, interleave(many_tables()))
    messages = [await stored(js, log_names, sequence) for sequence in sequences]
    writers = [
        ProjectionWriter(projection_pool, log_names, CommittedState.for_live_consumer())
        for _ in range(2)
    ]
    await writers[0].prepare((await js.stream_info(log_names.stream)).created)  # as a consumer
    turns = [messages[start : start + 23] for start in range(0, len(messages), 23)]
    for turn, chunk in enumerate(turns):
        outcome = await writers[turn % 2].project(chunk)
        assert outcome.gaps == [] and outcome.dead_letters == {}

    await rebuild(fresh_database_url, js, log_names, schema=REBUILT)
    async with projection_pool.acquire() as connection:
        comparison = await compare_projections(connection, SCHEMA, REBUILT)
    assert [c.table for c in comparison if not c.identical] == []
    finished = "SELECT count(*) FROM games WHERE status = 'finished'"
    assert await projection_pool.fetchval(finished) == 9
    assert await projection_pool.fetchval(f"{finished} AND NOT rated") == 1


async def stored(js: JetStreamContext, names: LogNames, sequence: int) -> StoredMessage:
    """The stream's message at ``sequence``, as the consumer hands it to the writer."""
    message = await js.get_msg(names.stream, sequence)
    assert message.subject is not None and message.data is not None
    return StoredMessage(
        sequence=sequence,
        subject=message.subject,
        data=message.data,
        headers=dict(message.headers or {}),
        stored_at=datetime.now(UTC),
    )


async def test_a_stream_made_again_under_the_same_name_needs_a_rebuild(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
) -> None:
    """Its sequences start anew: going on from the old position would skip its first ones."""
    js, names = nats_connection.jetstream, consumer_settings.log
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        done = await publish(
            js, names, TableLog("whist", people("a", "b", "c"), seed=71).play().batches
        )
        await wait_for_position(projection_pool, names.stream, done[-1])
    position = await read_position(projection_pool, names.stream)

    await js.delete_stream(names.stream)
    await create_event_stream(js, names)
    await publish(js, names, TableLog("hearts", people("d", "e", "f", "g"), seed=72).play().batches)
    writer = ProjectionWriter(projection_pool, names, CommittedState.for_live_consumer())
    consumer = ProjectionConsumer(
        js,
        writer,
        consumer_settings,
        ProjectionMetrics(CollectorRegistry()),
        reader=SequenceReader(nats_connection.client, names.stream),
    )
    with pytest.raises(StreamReplacedError, match="rebuild the projection"):
        await asyncio.wait_for(consumer.run(), 10)
    assert await read_position(projection_pool, names.stream) == position  # nothing skipped

    # Rebuilt from the new stream, the projection goes on live in it.
    await rebuild(fresh_database_url, js, names, schema=SCHEMA)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        done = await publish(
            js, names, TableLog("whist", people("h", "i", "j"), seed=73).play().batches
        )
        await wait_for_position(projection_pool, names.stream, done[-1])
    finished = await projection_pool.fetchval(
        "SELECT count(*) FROM games WHERE status = 'finished'"
    )
    assert finished == 2  # the new stream's two games, none of the old one's


async def test_a_rebuild_is_compared_with_the_live_projection_at_the_same_position(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
) -> None:
    """The live projection went on after the rebuild read the log's end (games still being
    played): the rebuilt schema is brought forward to it and both compared there."""
    js, names = nats_connection.jetstream, consumer_settings.log
    first = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=21).play()
    second = TableLog("whist", people("eve", "fay", "gus"), seed=22)
    second.open_and_start()
    second.play_deals(2)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        published = await publish(js, names, first.batches + second.batches[:5])
        await wait_for_position(projection_pool, names.stream, published[-1])
        await rebuild(fresh_database_url, js, names, schema=REBUILT)
        later = await publish(js, names, second.batches[5:], expect_last_sequence=False)
        await wait_for_position(projection_pool, names.stream, later[-1])

    position, comparison = await compare_at_same_position(
        fresh_database_url, js, names, live=SCHEMA, rebuilt=REBUILT, verifier=None
    )

    assert position == later[-1]
    assert [c.table for c in comparison if not c.identical] == []
    async with projection_pool.acquire() as connection:
        assert await read_position(connection, names.stream, REBUILT) == later[-1]
