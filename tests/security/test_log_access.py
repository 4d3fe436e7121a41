"""The event log against an attacker: NATS with one user per component, sealed deals, signed
batches. Each test runs its own nats-server (from the wheel) with authorization on, the real
table service and the real scoring consumer, as in docs/security.md."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc
import nats
import pytest
from nats.aio.client import Client

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.reader import LogReader
from cardtable.eventlog.store import EventStore
from cardtable.platform.deal_sealing import UnsealError, open_event
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import batch_sha256
from cardtable.platform.log_streams import provision
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.nats_access import BOTS, OPERATOR, PROVISIONER, SCORING, TABLE, NatsUser
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.servers.dev_servers import DevServers, NatsAccessPlan, async_dev_servers
from tests.scoring_service.conftest import SCHEMA, running_consumer, wait_for_position
from tests.table_service.harness import (
    NO_TIMERS,
    Cluster,
    log_security,
    play_to_the_end,
    running_rules,
    running_table_service,
)

PREFIX = "secure"
NAMES = LogNames.from_prefix(PREFIX)
HIDDEN = frozenset({"deal_shuffled"})


@dataclass
class SecureStack:
    servers: DevServers
    users: dict[str, NatsUser]
    cluster: Cluster

    @property
    def url(self) -> str:
        return self.servers.nats_url

    async def connect_as(self, component: str) -> NatsConnection:
        user = self.users[component]
        return await connect_nats(
            self.url,
            name=f"pytest-{component}",
            credentials=user.credentials,
            inbox_prefix=user.inbox_prefix,
            connect_timeout_seconds=5,
        )


@asynccontextmanager
async def secure_stack() -> AsyncIterator[SecureStack]:
    """NATS admitting only the deployment's users, provisioned, and a table service on it."""
    async with async_dev_servers(nats=True, postgres=False, access=NatsAccessPlan()) as servers:
        users = servers.nats_users(PREFIX)
        provisioner = users[PROVISIONER]
        connection = await connect_nats(
            servers.nats_url,
            name="pytest-provision",
            credentials=provisioner.credentials,
            inbox_prefix=provisioner.inbox_prefix,
        )
        try:
            await provision(connection.jetstream, NAMES)
        finally:
            await connection.close()
        async with (
            running_rules() as rules_address,
            running_table_service(
                servers.nats_url, PREFIX, rules_address, credentials=users[TABLE].credentials
            ) as cluster,
        ):
            yield SecureStack(servers, users, cluster)


@asynccontextmanager
async def _projected(
    stack: SecureStack, database_url: str, until: int
) -> AsyncIterator[asyncpg.Pool]:
    """The scoring consumer run as the scoring user, with the public keys, until it has
    projected the log up to ``until``; its database, open for the block."""
    pool = await create_schema_pool(database_url, SCHEMA, max_size=4)
    try:
        async with pool.acquire() as connection:
            await apply_migrations(connection, SCHEMA)
        scoring = await stack.connect_as(SCORING)
        settings = ConsumerSettings(
            log=NAMES,
            consumer_name="scoring",
            schema=SCHEMA,
            batch_size=64,
            ack_wait_seconds=2.0,
            verifier=log_security(PREFIX).verifier,
        )
        try:
            async with running_consumer(scoring, pool, settings):
                await wait_for_position(pool, NAMES.stream, until)
        finally:
            await scoring.close()
        yield pool
    finally:
        await close_pool(pool)


async def _hearts_game(cluster: Cluster, *, finish: bool) -> str:
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    table_id = await players[0].create("hearts", 4, {"quick": "true"}, NO_TIMERS)
    for seat, player in players.items():
        await player.join(table_id, seat)
    if finish:
        await play_to_the_end(table_id, players, random.Random(table_id))
    return table_id


async def _violations(
    url: str, user: NatsUser, attempt: Callable[[Client], Any]
) -> tuple[list[str], BaseException | None]:
    """What the server says when ``user`` tries ``attempt``: its errors, and what was raised."""
    errors: list[str] = []

    async def on_error(error: Exception) -> None:
        errors.append(str(error))

    client = await nats.connect(
        url,
        user=user.user,
        password=user.password,
        inbox_prefix=user.inbox_prefix,
        error_cb=on_error,
        allow_reconnect=False,
    )
    raised: BaseException | None = None
    try:
        await attempt(client)
        await client.flush()
        await asyncio.sleep(0.2)
    except Exception as error:
        raised = error
    finally:
        await client.close()
    return errors, raised


async def test_an_anonymous_connection_is_refused() -> None:
    async with async_dev_servers(nats=True, postgres=False, access=NatsAccessPlan()) as servers:
        servers.nats_users(PREFIX)
        with pytest.raises(Exception, match=r"[Aa]uthorization"):
            await nats.connect(servers.nats_url, allow_reconnect=False, max_reconnect_attempts=0)
        wrong = NatsUser(TABLE, NAMES, "not-the-password")
        with pytest.raises(Exception, match=r"[Aa]uthorization"):
            await nats.connect(
                servers.nats_url,
                user=wrong.user,
                password=wrong.password,
                allow_reconnect=False,
                max_reconnect_attempts=0,
            )


async def test_each_component_does_its_job_and_nothing_else(fresh_database_url: str) -> None:
    async with secure_stack() as stack:
        table_id = await _hearts_game(stack.cluster, finish=True)
        messages = (await stack.cluster.nats.jetstream.stream_info(NAMES.stream)).state.messages

        # the scoring service projects through its durable consumer, and can append nothing
        async with _projected(stack, fresh_database_url, messages) as pool:
            status = await pool.fetchval("SELECT status FROM games WHERE table_id = $1", table_id)
            assert status == "finished"
            assert await pool.fetchval("SELECT count(*) FROM dead_letters") == 0

        async def append(client: Client) -> None:
            await client.jetstream().publish(NAMES.table_subject(table_id), b"x", timeout=1)

        for component in (SCORING, BOTS, OPERATOR, PROVISIONER):
            errors, raised = await _violations(stack.url, stack.users[component], append)
            assert any("permissions violation for publish" in error.lower() for error in errors), (
                component,
                errors,
                raised,
            )
            assert raised is not None, component

        # the bot service uses its claims bucket and hears seat requests, and cannot read the log
        bots = await stack.connect_as(BOTS)
        try:
            claims = await bots.jetstream.key_value(NAMES.claims_bucket)
            await claims.put("t.0", b"replica-a")
            assert (await claims.get("t.0")).value == b"replica-a"
            await bots.client.subscribe(NAMES.bot_requests)
        finally:
            await bots.close()

        async def read_the_log(client: Client) -> None:
            js = client.jetstream(timeout=1)
            await js.get_msg(NAMES.stream, seq=1)

        async def follow_the_log(client: Client) -> None:
            await client.subscribe(f"{NAMES.stored_root}.>")

        async def consume_the_log(client: Client) -> None:
            await client.jetstream(timeout=1).subscribe(NAMES.tables_subject)

        for attempt in (read_the_log, follow_the_log, consume_the_log):
            errors, _ = await _violations(stack.url, stack.users[BOTS], attempt)
            assert any("permissions violation" in error.lower() for error in errors), (
                attempt.__name__
            )

        # the operator reads and audits the log, with the public keys alone
        operator = await stack.connect_as(OPERATOR)
        try:
            reader = LogReader(operator, EventStore(operator.jetstream, NAMES))
            batches = await reader.table(table_id)
            report = audit_log(
                table_id,
                batches,
                verifier=log_security(PREFIX).verifier,
                signed_from=await reader.signed_from(),
            )
            assert report.ok, [str(problem) for problem in report.problems]
        finally:
            await operator.close()

        # only the provisioner may change the stream
        async def change_the_stream(client: Client) -> None:
            await client.jetstream(timeout=1).delete_stream(NAMES.stream)

        for component in (TABLE, SCORING, BOTS, OPERATOR):
            errors, raised = await _violations(stack.url, stack.users[component], change_the_stream)
            assert any("permissions violation" in error.lower() for error in errors), component
        assert (await stack.cluster.nats.jetstream.stream_info(NAMES.stream)).state.messages


async def test_a_running_deal_cannot_be_read_from_the_log_with_scoring_credentials() -> None:
    async with secure_stack() as stack:
        table_id = await _hearts_game(stack.cluster, finish=False)
        scoring = await stack.connect_as(SCORING)
        try:
            js = scoring.jetstream
            await js.add_consumer(
                NAMES.stream,
                durable_name="scoring",
                ack_policy="explicit",
                filter_subject=NAMES.tables_subject,
            )
            subscription = await js.pull_subscribe_bind(durable="scoring", stream=NAMES.stream)
            batches = [
                events_pb2.EventBatch.FromString(message.data)
                for message in await subscription.fetch(100, timeout=2)
            ]
        finally:
            await scoring.close()
        events = [event for batch in batches for event in batch.events]
        assert any(event.HasField("game_started") for event in events)
        sealed = [event for event in events if event.HasField("sealed")]
        # the shuffle and each seat's cards: five hidden events, all sealed
        assert len(sealed) == 5
        assert not [event for event in events if event.WhichOneof("body") in HIDDEN]
        for event in events:
            if event.audience.kind != common_pb2.Audience.KIND_PUBLIC:
                assert event.HasField("sealed")
        assert not [
            event for event in events if event.HasField("deal_seed_revealed")
        ]  # the deal is running: its key is not out yet
        # and it does not open without the deal's key, which only the table service holds
        with pytest.raises(UnsealError):
            open_event(sealed[0], table_id, bytes(32))


async def test_a_forged_batch_is_refused_by_the_fold_dead_lettered_and_named_by_the_audit(
    fresh_database_url: str,
) -> None:
    async with secure_stack() as stack:
        table_id = await _hearts_game(stack.cluster, finish=False)
        js = stack.cluster.nats.jetstream
        last = await stack.cluster.parts.app.store.last(table_id)
        assert last is not None
        # an attacker with the table service's NATS password but not its signing key hands
        # seat 1 to themselves
        forged = events_pb2.EventBatch(
            schema_version=1,
            table_id=table_id,
            command_id="forged",
            table_version=last.batch.table_version + 1,
            previous_batch_sha256=batch_sha256(last.payload),
            events=[
                events_pb2.Event(
                    audience=common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC),
                    seat_reclaimed=events_pb2.SeatReclaimed(seat=1, player_id="mallory"),
                )
            ],
        )
        attacker = await stack.connect_as(TABLE)
        try:
            await attacker.jetstream.publish(
                NAMES.table_subject(table_id),
                forged.SerializeToString(),
                headers={"Nats-Expected-Last-Subject-Sequence": str(last.sequence)},
            )
        finally:
            await attacker.close()
        forged_sequence = (await js.stream_info(NAMES.stream)).state.last_seq

        # the table service folds nothing of it: seat 1 is still p1's, and the table is
        # read-only, saying why
        mallory = stack.cluster.player("mallory")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await mallory.view(table_id, 1)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert (await stack.cluster.player("p1").view(table_id, 1)).seat_view.hand
        with pytest.raises(grpc.aio.AioRpcError) as move:
            await stack.cluster.player("p0").move(table_id, 0, "pass 2C 3C 4C")
        assert move.value.code() == grpc.StatusCode.DATA_LOSS
        assert "failed verification" in (move.value.details() or "")
        assert (await js.stream_info(NAMES.stream)).state.last_seq == forged_sequence
        failures = stack.cluster.registry.get_sample_value(
            "cardtable_log_integrity_failures_total", {"reason": "unsigned"}
        )
        assert failures == 1

        # the audit names it
        batches = await LogReader(stack.cluster.nats, stack.cluster.parts.app.store).table(table_id)
        report = audit_log(table_id, batches, verifier=log_security(PREFIX).verifier)
        assert [str(problem) for problem in report.problems if problem.check == "signatures"] == [
            f"batch at stream sequence {forged_sequence} (table version "
            f"{forged.table_version}): the batch is not signed"
        ]

        # the scoring service dead-letters it with its reason
        async with _projected(stack, fresh_database_url, forged_sequence) as pool:
            letters = await pool.fetch("SELECT stream_sequence, reason FROM dead_letters")
            assert [(row["stream_sequence"], row["reason"]) for row in letters] == [
                (
                    forged_sequence,
                    f"the batch failed verification: batch at stream sequence {forged_sequence} "
                    f"(table version {forged.table_version}): the batch is not signed",
                )
            ]
            holder = await pool.fetchval(
                "SELECT player_id FROM seats WHERE table_id = $1 AND seat = 1", table_id
            )
            assert holder == "p1"
