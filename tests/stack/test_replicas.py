"""Two table-service and two bot-service processes in one local run finish games correctly."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
import pytest

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.store import EventStore
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.platform.tokens import TokenCodec
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc
from cardtable_tools.servers.provisioning import NatsNamespace
from cardtable_tools.stack.processes import ServiceProcess, start
from tests.table_service.harness import SIGNING_KEY, log_security

pytestmark = pytest.mark.timeout(300)

TABLES = [
    ("hearts", 4, {"quick": "true"}),
    ("belote", 4, {}),
    ("358", 3, {}),
    ("hearts", 4, {"quick": "true"}),
]


async def test_two_table_and_two_bot_replicas_finish_a_set_of_games(
    nats_url: str,
    nats_namespace: NatsNamespace,
    nats_connection: NatsConnection,
    rules_address: str,
) -> None:
    base = {
        "NATS_URL": nats_url,
        "TOKEN_SIGNING_KEY": SIGNING_KEY,
        "EVENT_PREFIX": nats_namespace.prefix,
    }
    services: list[ServiceProcess] = []
    try:
        table_settings = {
            **base,
            **log_security(nats_namespace.prefix).environment(),
            "MIN_TURN_TIMER_MS": "50",
            "RULES_ADDRESS": rules_address,
        }
        tables = [await start("table", table_settings) for _ in range(2)]
        services.extend(tables)
        for index in range(2):
            services.append(
                await start(
                    "bots",
                    {**base, "TABLE_ADDRESS": tables[index].address, "BOT_STRATEGY": "random"},
                )
            )
        token = TokenCodec(SIGNING_KEY).issue("host")
        metadata = (("authorization", f"Bearer {token}"),)
        settings = events_pb2.TableSettings(
            turn_timer_ms=10_000, fill_with_bots=True, fill_wait_ms=100
        )
        table_ids = []
        async with (
            grpc.aio.insecure_channel(tables[0].address) as first,
            grpc.aio.insecure_channel(tables[1].address) as second,
        ):
            stubs = [
                table_pb2_grpc.TableServiceStub(first),
                table_pb2_grpc.TableServiceStub(second),
            ]
            for index, (game, seats, options) in enumerate(TABLES):
                reply = await stubs[index % 2].CreateTable(
                    table_pb2.CreateTableRequest(
                        command_id=str(uuid.uuid4()),
                        game=game,
                        seats=seats,
                        options=common_pb2.GameOptions(values=options),
                        settings=settings,
                    ),
                    metadata=metadata,
                )
                table_ids.append(reply.table_id)
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                statuses = [
                    (
                        await stubs[index % 2].GetTable(
                            table_pb2.GetTableRequest(table_id=table_id)
                        )
                    ).status
                    for index, table_id in enumerate(table_ids)
                ]
                if all(status == "finished" for status in statuses):
                    break
                await asyncio.sleep(1)
            assert statuses == ["finished"] * len(TABLES)
        names = LogNames.from_prefix(nats_namespace.prefix)
        store = EventStore(nats_connection.jetstream, names)
        for table_id in table_ids:
            batches = [stored async for stored in store.read(table_id)]
            report = audit_log(
                table_id, batches, verifier=log_security(nats_namespace.prefix).verifier
            )
            assert report.ok, [str(problem) for problem in report.problems]
            timed_out = [
                event
                for stored in batches
                for event in stored.batch.events
                if event.HasField("turn_timed_out")
            ]
            assert not timed_out, "a computer player missed its turn"
    finally:
        for service in services:
            service.terminate()
