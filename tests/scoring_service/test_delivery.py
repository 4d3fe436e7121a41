"""Exactly-once effect: duplicates, redeliveries, restarts and poison messages change nothing else.

The position lives in Postgres and moves in the same transaction as the rows, so whatever
JetStream delivers twice (a crash between commit and ack, a restarted consumer) is skipped, and
a batch stored twice in the log is skipped by its table version.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

import asyncpg
import nats.errors
import pytest
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError
from prometheus_client import CollectorRegistry

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchSigner, BatchVerifier, parse_public_keys
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.consumer import ProjectionConsumer, stored_message
from cardtable.scoring_service.messages import StoredMessage
from cardtable.scoring_service.rebuild import compare_projections, rebuild
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable.scoring_service.writer import ProjectionWriter, read_position
from cardtable_api.events.v1 import events_pb2
from tests.scoring_service.conftest import SCHEMA, running_consumer, snapshot, wait_for_position
from tests.scoring_service.event_log import TableLog, bot, interleave, people, publish


def two_tables() -> list[TableLog]:
    return [
        TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=61).play(),
        TableLog("whist", [*people("ann", "eve"), bot("robo")], seed=62).play(),
    ]


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


async def counted(registry: CollectorRegistry, name: str, at_least: float) -> float:
    """The counter ``name`` once it reaches ``at_least`` (or after about 5 s).

    The consumer counts a read after its commit, so a test that saw the position committed
    can be a moment ahead of the count.
    """
    for _ in range(250):
        if sample(registry, name) >= at_least:
            break
        await asyncio.sleep(0.02)
    return sample(registry, name)


async def test_batches_published_twice_are_counted_once(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    batches = interleave(two_tables())
    registry = CollectorRegistry()
    async with running_consumer(nats_connection, projection_pool, consumer_settings, registry):
        sequences = await publish(js, names, batches)
        await wait_for_position(projection_pool, names.stream, sequences[-1])
        once = await snapshot(projection_pool)

        # The same command ids again: JetStream's de-duplication stores nothing new.
        again = await publish(js, names, batches, expect_last_sequence=False)
        assert again == sequences
        # Stored a second time (say, a writer without message ids): the table version says
        # they were folded already.
        twice = await publish(js, names, batches, message_ids=False, expect_last_sequence=False)
        await wait_for_position(projection_pool, names.stream, twice[-1])

    assert await snapshot(projection_pool) == once
    assert sample(registry, "scoring_skipped_batches_total", why="duplicate") == len(batches)
    assert sample(registry, "scoring_projected_batches_total") == len(batches)
    games = await projection_pool.fetch(
        "SELECT player_id, games FROM ratings WHERE game = 'hearts'"
    )
    assert {record["games"] for record in games} == {1}


async def test_a_crash_between_commit_and_ack_redelivers_what_is_then_skipped(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    batches = interleave(two_tables())
    half = len(batches) // 2
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        first = await publish(js, names, batches[:half])
        await wait_for_position(projection_pool, names.stream, first[-1])
    rest = await publish(js, names, batches[half:])

    # A consumer process takes the rest from the durable consumer and commits it, then dies
    # before it can acknowledge anything.
    subscription = await js.pull_subscribe_bind(
        durable=consumer_settings.consumer_name, stream=names.stream
    )
    delivered = []
    while len(delivered) < len(rest):
        delivered += await subscription.fetch(len(rest) - len(delivered), timeout=5)
    outcome = await ProjectionWriter(projection_pool, names).project(
        [stored_message(message) for message in delivered]
    )
    await subscription.unsubscribe()
    assert outcome.position == rest[-1]
    committed = await snapshot(projection_pool, with_position=True)

    # The next process gets them again once the ack wait runs out, and changes nothing.
    registry = CollectorRegistry()
    async with running_consumer(nats_connection, projection_pool, consumer_settings, registry):
        for _ in range(200):
            if sample(registry, "scoring_skipped_batches_total", why="redelivered") >= len(rest):
                break
            await asyncio.sleep(0.05)
        info = await js.consumer_info(names.stream, consumer_settings.consumer_name)

    assert sample(registry, "scoring_skipped_batches_total", why="redelivered") == len(rest)
    assert sample(registry, "scoring_projected_batches_total") == 0
    assert info.num_ack_pending == 0
    assert await snapshot(projection_pool, with_position=True) == committed


async def test_a_crash_before_commit_loses_nothing(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    logs = two_tables()
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        first = await publish(js, names, logs[0].batches[:10])
        await wait_for_position(projection_pool, names.stream, first[-1])
    rest = await publish(js, names, interleave([_rest(logs[0], 10), _rest(logs[1], 0)]))

    # Delivered to a process that died before committing: nothing reached Postgres.
    subscription = await js.pull_subscribe_bind(
        durable=consumer_settings.consumer_name, stream=names.stream
    )
    assert await subscription.fetch(len(rest), timeout=1)
    await subscription.unsubscribe()

    # The next start sees the consumer ahead of the position and starts again from there,
    # without waiting for the ack wait to expire.
    async with running_consumer(
        nats_connection, projection_pool, consumer_settings, ack_wait_seconds=600.0
    ):
        await wait_for_position(projection_pool, names.stream, rest[-1], timeout_seconds=20)
    ratings = await projection_pool.fetchval("SELECT sum(games) FROM ratings")
    assert ratings == 7


def _rest(log: TableLog, start: int) -> TableLog:
    copy = TableLog(log.spec.name, log.players, table_id=log.table_id)
    copy.batches = log.batches[start:]
    return copy


async def test_restarting_the_consumer_while_the_log_grows(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    batches = interleave(two_tables())
    chunks = [batches[i : i + len(batches) // 5] for i in range(0, len(batches), len(batches) // 5)]
    last = 0
    for chunk in chunks:  # a consumer per chunk, stopped while the next chunk is appended
        async with running_consumer(
            nats_connection, projection_pool, consumer_settings, batch_size=16
        ):
            last = (await publish(js, names, chunk))[-1]
            await asyncio.sleep(0.05)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, names.stream, last)

    hearts = await projection_pool.fetch(
        "SELECT player_id, games FROM ratings WHERE game = 'hearts' ORDER BY player_id"
    )
    assert [tuple(r) for r in hearts] == [("ann", 1), ("bob", 1), ("cy", 1), ("dee", 1)]
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def test_poison_messages_are_set_aside_and_the_rest_goes_on(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    log = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=71).play()
    subject = names.table_subject(log.table_id)
    newer = events_pb2.EventBatch()
    newer.CopyFrom(log.batches[5])
    newer.schema_version = 2
    orphan = events_pb2.EventBatch(
        schema_version=1, table_id="no-such-table", table_version=3, command_id="x"
    )
    registry = CollectorRegistry()
    async with running_consumer(nats_connection, projection_pool, consumer_settings, registry):
        await publish(js, names, log.batches[:5])
        garbage = await js.publish(subject, b"\xffnot an event batch", stream=names.stream)
        future = await js.publish(
            subject, newer.SerializeToString(), headers={"Cardtable-Schema": "1"}
        )
        header = await js.publish(
            subject, log.batches[5].SerializeToString(), headers={"Cardtable-Schema": "2"}
        )
        unknown = await js.publish(names.table_subject("no-such-table"), orphan.SerializeToString())
        sequences = await publish(js, names, log.batches[5:], expect_last_sequence=False)
        await wait_for_position(projection_pool, names.stream, sequences[-1])
        info = await js.consumer_info(names.stream, consumer_settings.consumer_name)

    dead = await projection_pool.fetch(
        "SELECT stream_sequence, subject, reason FROM dead_letters ORDER BY stream_sequence"
    )
    assert [(r["stream_sequence"], r["subject"]) for r in dead] == [
        (garbage.seq, subject),
        (future.seq, subject),
        (header.seq, subject),
        (unknown.seq, names.table_subject("no-such-table")),
    ]
    reasons = [r["reason"] for r in dead]
    assert reasons[0].startswith("not an EventBatch")
    assert reasons[1] == "schema version 2 is newer than this reader (version 1)"
    assert reasons[2].startswith("Cardtable-Schema header '2'")
    assert reasons[3] == "table no-such-table has no TableCreated before this batch"
    assert sample(registry, "scoring_dead_letters_total") == 4
    assert info.num_ack_pending == 0 and info.num_redelivered == 0
    status = await projection_pool.fetchval(
        "SELECT status FROM games WHERE table_id = $1", log.table_id
    )
    assert status == "finished"
    assert await read_position(projection_pool, names.stream) == sequences[-1]


async def test_a_message_the_database_refuses_is_set_aside_alone(
    projection_pool: asyncpg.Pool, log_names: LogNames
) -> None:
    log = TableLog("whist", people("ann", "bob", "cy"), seed=73).play()
    # A deal whose card count no column can hold: the fold accepts it, PostgreSQL does not.
    bad = next(
        index
        for index, batch in enumerate(log.batches)
        if any(e.fact_recorded.HasField("deal_started") for e in batch.events)
    )
    for event in log.batches[bad].events:
        if event.fact_recorded.HasField("deal_started"):
            event.fact_recorded.deal_started.cards_each = 2**32 - 1
    messages = [
        StoredMessage(
            sequence,
            log_names.table_subject(batch.table_id),
            batch.SerializeToString(),
            {"Cardtable-Schema": "1"},
            datetime(2025, 1, 1, tzinfo=UTC),
        )
        for sequence, batch in enumerate(log.batches, start=1)
    ]

    outcome = await ProjectionWriter(projection_pool, log_names).project(messages)

    assert outcome.position == len(messages)
    first, *later = sorted(outcome.dead_letters)
    assert first == bad + 1
    assert "could not be stored" in outcome.dead_letters[first]
    # What this deal's later moves say cannot be folded without it; they are set aside too,
    # each with its reason, and the game goes on from the next deal.
    assert later and all("has no deal in play" in outcome.dead_letters[s] for s in later)
    assert outcome.projected == len(messages) - 1 - len(later)
    status = await projection_pool.fetchval("SELECT status FROM games")
    assert status == "finished"


async def test_a_durable_consumer_deleted_under_the_service_is_made_again(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    js, names = nats_connection.jetstream, consumer_settings.log
    first, second = two_tables()
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        done = await publish(js, names, first.batches)
        await wait_for_position(projection_pool, names.stream, done[-1])
        await js.delete_consumer(names.stream, consumer_settings.consumer_name)
        done = await publish(js, names, second.batches)
        await wait_for_position(projection_pool, names.stream, done[-1], timeout_seconds=20)
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def consumer_comes_to(
    js: JetStreamContext, stream: str, name: str, wanted: Callable[[api.ConsumerInfo], bool]
) -> bool:
    """Whether the consumer ``name`` exists and is ``wanted`` within 10 s."""
    for _ in range(100):
        with contextlib.suppress(NotFoundError):
            if wanted(await js.consumer_info(stream, name)):
                return True
        await asyncio.sleep(0.1)
    return False


async def test_a_consumer_that_stops_delivering_is_made_afresh_from_the_position(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    """As a clustered consumer did after its stream's leader was lost: it exists, it answers,
    it fits every setting, and it delivers nothing while the stream grows. The projection reads
    around it by sequence; when it leaves the stream unread a second time, it is replaced."""
    version = nats_connection.client.connected_server_version
    if (version.major, version.minor) < (2, 11):
        pytest.skip(f"pausing a consumer needs NATS 2.11, this is {version}")
    js, names = nats_connection.jetstream, consumer_settings.log
    first, second = two_tables()
    registry = CollectorRegistry()
    half = len(second.batches) // 2
    async with running_consumer(nats_connection, projection_pool, consumer_settings, registry):
        done = await publish(js, names, first.batches)
        await wait_for_position(projection_pool, names.stream, done[-1])
        await js.pause_consumer(
            names.stream, consumer_settings.consumer_name, "2100-01-01T00:00:00Z"
        )
        done = await publish(js, names, second.batches[:half])
        await wait_for_position(projection_pool, names.stream, done[-1], timeout_seconds=20)
        assert await counted(registry, "scoring_sequence_reads_total", half) == half
        paused = await js.consumer_info(names.stream, consumer_settings.consumer_name)
        done = await publish(js, names, second.batches[half:])
        await wait_for_position(projection_pool, names.stream, done[-1], timeout_seconds=20)
        replaced = await consumer_comes_to(
            js, names.stream, consumer_settings.consumer_name, lambda info: not info.paused
        )
    assert paused.paused  # read around, not yet replaced
    assert replaced  # the consumer projecting now is a new one
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def test_a_consumer_left_with_the_old_explicit_ack_policy_is_replaced(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    """Before one ack per batch, the consumer acked each message: an upgrade finds that one."""
    js, names = nats_connection.jetstream, consumer_settings.log
    first, second = two_tables()
    done = await publish(js, names, first.batches)
    await js.add_consumer(
        names.stream,
        api.ConsumerConfig(
            durable_name=consumer_settings.consumer_name,
            ack_policy=api.AckPolicy.EXPLICIT,
            filter_subject=names.tables_subject,
        ),
    )
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, names.stream, done[-1])
        done = await publish(js, names, second.batches)
        await wait_for_position(projection_pool, names.stream, done[-1])
        info = await js.consumer_info(names.stream, consumer_settings.consumer_name)
    assert info.config.ack_policy == api.AckPolicy.ALL
    # Every message is acknowledged, though only each batch's last one was acked.
    assert info.num_ack_pending == 0 and info.ack_floor.stream_seq == done[-1]
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 7


async def test_a_broken_schema_stops_the_writer_instead_of_setting_messages_aside(
    projection_pool: asyncpg.Pool, log_names: LogNames
) -> None:
    log = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=74).play()
    messages = [
        StoredMessage(
            sequence,
            log_names.table_subject(batch.table_id),
            batch.SerializeToString(),
            {},
            datetime(2025, 1, 1, tzinfo=UTC),
        )
        for sequence, batch in enumerate(log.batches, start=1)
    ]
    await projection_pool.execute("DROP TABLE deal_seats")

    with pytest.raises(asyncpg.UndefinedTableError):
        await ProjectionWriter(projection_pool, log_names).project(messages)

    assert await projection_pool.fetchval("SELECT count(*) FROM dead_letters") == 0
    assert await read_position(projection_pool, log_names.stream) == 0


async def test_a_delivery_lost_on_its_way_comes_again_and_is_not_skipped(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    fresh_database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fetch's reply lost with a NATS server (seen when a cluster's leader was killed): the
    next delivery's "ack all" would have covered the lost message without projecting it, and
    the table's later batches, no longer following it, would have been set aside."""
    js, names = nats_connection.jetstream, consumer_settings.log
    signer = BatchSigner.generate()
    verifier = BatchVerifier(parse_public_keys(signer.public_text()))
    lost: list[int] = []
    fetch = ProjectionConsumer._next_messages

    async def losing_one(self: ProjectionConsumer, subscription: Any) -> list[Msg]:
        messages = await fetch(self, subscription)
        kept = [message for message in messages if message.metadata.sequence.stream != 4]
        if not lost and len(kept) < len(messages):
            lost.append(4)
            return kept
        return messages

    monkeypatch.setattr(ProjectionConsumer, "_next_messages", losing_one)
    async with running_consumer(
        nats_connection, projection_pool, consumer_settings, verifier=verifier
    ):
        sequences = await publish(js, names, interleave(two_tables()), signer=signer)
        await wait_for_position(projection_pool, names.stream, sequences[-1])

    assert lost == [4]
    assert await projection_pool.fetchval("SELECT count(*) FROM dead_letters") == 0
    await rebuild(fresh_database_url, js, names, schema="scoring_rebuild", verifier=verifier)
    async with projection_pool.acquire() as connection:
        comparison = await compare_projections(connection, SCHEMA, "scoring_rebuild")
    assert [c.table for c in comparison if not c.identical] == []


class LeaderlessConsumer:
    """A JetStream context whose consumer calls go unanswered while ``leaderless`` is set: a
    cluster's consumer group (and meta group) without a leader. Everything else is real."""

    UNANSWERED = ("consumer_info", "add_consumer", "delete_consumer", "pull_subscribe_bind")

    def __init__(self, jetstream: JetStreamContext) -> None:
        self._jetstream = jetstream
        self.leaderless = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._jetstream, name)
        if name not in self.UNANSWERED:
            return attribute

        async def unanswered_while_leaderless(*args: Any, **kwargs: Any) -> Any:
            if self.leaderless:
                await asyncio.sleep(0.2)
                raise nats.errors.TimeoutError
            return await attribute(*args, **kwargs)

        return unanswered_while_leaderless


async def test_while_the_consumer_can_be_neither_used_nor_made_the_log_is_read_by_sequence(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    """The stream goes on under a new leader while the consumer's group has none: the
    projection keeps up by direct gets, signatures and all, and binds again afterwards."""
    js, names = nats_connection.jetstream, consumer_settings.log
    signer = BatchSigner.generate()
    verifier = BatchVerifier(parse_public_keys(signer.public_text()))
    leaderless = LeaderlessConsumer(js)
    registry = CollectorRegistry()
    first, second = two_tables()
    third = TableLog("hearts", people("fay", "gus", "hal", "ivy"), seed=63).play()
    consumer_side = replace(nats_connection, jetstream=cast(JetStreamContext, leaderless))
    async with running_consumer(
        consumer_side, projection_pool, consumer_settings, registry, verifier=verifier
    ):
        done = await publish(js, names, first.batches, signer=signer)
        await wait_for_position(projection_pool, names.stream, done[-1])
        assert sample(registry, "scoring_sequence_reads_total") == 0

        leaderless.leaderless = True
        await js.delete_consumer(names.stream, consumer_settings.consumer_name)
        done = await publish(js, names, second.batches, signer=signer)
        await wait_for_position(projection_pool, names.stream, done[-1], timeout_seconds=20)
        reads = await counted(registry, "scoring_sequence_reads_total", len(second.batches))
        assert reads >= len(second.batches)

        leaderless.leaderless = False
        done = await publish(js, names, third.batches, signer=signer)
        await wait_for_position(projection_pool, names.stream, done[-1], timeout_seconds=20)
        made_again = await consumer_comes_to(
            js,
            names.stream,
            consumer_settings.consumer_name,
            lambda info: (info.config.opt_start_seq or 0) > done[0],  # from the position
        )
    assert made_again
    assert await projection_pool.fetchval("SELECT count(*) FROM dead_letters") == 0
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 11


async def test_a_message_read_by_sequence_is_the_one_the_consumer_delivers(
    nats_connection: NatsConnection, log_names: LogNames
) -> None:
    js = nats_connection.jetstream
    signer = BatchSigner.generate()
    sequences = await publish(js, log_names, two_tables()[0].batches, signer=signer)
    subscription = await js.pull_subscribe(log_names.tables_subject, stream=log_names.stream)
    delivered = [
        stored_message(message) for message in await subscription.fetch(len(sequences), timeout=5)
    ]
    await subscription.unsubscribe()

    reader = SequenceReader(nats_connection.client, log_names.stream)
    assert await reader.read_after(0, limit=len(sequences) + 10) == delivered
    assert [m.sequence for m in await reader.read_after(3, limit=2)] == [4, 5]
    assert await reader.read_after(sequences[-1], limit=5) == []
