"""A log written before signing (recorded with the previous version, kept as a fixture) stays
readable and auditable, is reported as written before signing, and is never taken for signed."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

from nats.js import api

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.reader import LogReader
from cardtable.eventlog.store import StoredBatch
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import ensure_events_stream, events_stream_config
from cardtable.platform.nats import NatsConnection
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import log_security, play_to_the_end, running_table_service

FIXTURE = Path(__file__).parent.parent / "fixtures" / "log_before_signing.json"


async def _store_the_fixture(connection: NatsConnection, names: LogNames) -> dict[str, Any]:
    """The fixture's messages in a stream made as the previous version made it."""
    fixture = json.loads(FIXTURE.read_text())
    old_config = events_stream_config(names)
    old_config.republish = None
    await connection.jetstream.add_stream(old_config)
    head = f"{fixture['prefix']}.table."
    for message in fixture["messages"]:
        subject = names.table_subject(message["subject"].removeprefix(head))
        await connection.jetstream.publish(
            subject, base64.b64decode(message["data"]), headers=message["headers"]
        )
    return fixture


async def test_a_log_written_before_signing_is_read_continued_and_audited(
    nats_url: str,
    nats_namespace: NatsNamespace,
    nats_connection: NatsConnection,
    rules_address: str,
) -> None:
    names = LogNames.from_prefix(nats_namespace.prefix)
    fixture = await _store_the_fixture(nats_connection, names)
    stream = await ensure_events_stream(nats_connection.jetstream, names)
    assert stream.signed_from_sequence == len(fixture["messages"]) + 1
    finished, waiting = fixture["finished_table"], fixture["open_table"]
    verifier = log_security(nats_namespace.prefix).verifier

    async with running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster:
        reply = await cluster.player("anyone").stub.GetGameRecord(
            table_pb2.GetGameRecordRequest(table_id=finished)
        )
        assert json.loads(reply.record_json)["result"]["over"]
        # the table still waiting for players is continued, signed from now on
        players = {seat: cluster.player(f"new{seat}") for seat in range(3)}
        for seat, player in players.items():
            await player.join(waiting, seat)
        await play_to_the_end(waiting, players, random.Random(3))
        reader = LogReader(cluster.nats, cluster.parts.app.store)
        old_log = await reader.table(finished)
        continued = await reader.table(waiting)
        signed_from = await reader.signed_from()

    report = audit_log(finished, old_log, verifier=verifier, signed_from=signed_from)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.notes == [f"{len(old_log)} batches written before signing (not signed)"]
    assert report.over and report.deals > 0

    report = audit_log(waiting, continued, verifier=verifier, signed_from=signed_from)
    assert report.ok, [str(problem) for problem in report.problems]
    key_id = log_security(nats_namespace.prefix).signer.key_id
    assert report.notes == [
        f"{len(continued) - 1} batches signed by key {key_id}",
        "1 batches written before signing (not signed)",
    ]

    # an unsigned batch stored after signing began is refused, never read as an old one
    forged = StoredBatch(
        continued[-1].batch, signed_from + 10_000, continued[-1].payload, headers={}
    )
    tampered = audit_log(
        waiting, [*continued[:-1], forged], verifier=verifier, signed_from=signed_from
    )
    assert any("is not signed" in str(problem) for problem in tampered.problems)


async def test_the_stream_records_where_signing_began_only_once(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    names = LogNames.from_prefix(nats_namespace.prefix)
    await _store_the_fixture(nats_connection, names)
    first = await ensure_events_stream(nats_connection.jetstream, names)
    await nats_connection.jetstream.publish(names.table_subject("later"), b"")
    again = await ensure_events_stream(nats_connection.jetstream, names)
    assert first.signed_from_sequence == again.signed_from_sequence
    config: api.StreamConfig = (await nats_connection.jetstream.stream_info(names.stream)).config
    assert config.republish is not None or not again.republishes
