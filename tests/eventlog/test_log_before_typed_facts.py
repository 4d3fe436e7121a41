"""A log written before typed facts (recorded with the previous version, kept as a fixture)
still reads: its facts read as the typed facts the writer now writes for the same game, its
games audit, and the scoring projection folds it to the rows it folds the new form to."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cardtable.engine.actions import parse_action
from cardtable.engine.cards import parse_cards
from cardtable.engine.registry import game_spec
from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import StoredBatch
from cardtable.platform.deal_sealing import SealingKeys
from cardtable.platform.fact_messages import fact_event
from cardtable.platform.fact_upcasting import typed_event
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchSigner, BatchVerifier, load_public_key
from cardtable.scoring_service.messages import StoredMessage, decode
from cardtable.scoring_service.projection import Projection
from cardtable.scoring_service.rows import DealRow, DealSeatRow, GameRow
from cardtable.table_service.log_security import LogSecurity
from cardtable_api.events.v1 import events_pb2

FIXTURE = Path(__file__).parent.parent / "fixtures" / "log_before_typed_facts.json"
STORED_AT = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def _stored(fixture: dict[str, Any], table_id: str) -> list[StoredBatch]:
    return [
        StoredBatch(
            events_pb2.EventBatch.FromString(base64.b64decode(message["data"])),
            message["sequence"],
            base64.b64decode(message["data"]),
            message["headers"],
        )
        for message in fixture["messages"]
        if message["subject"].endswith(f".{table_id}")
    ]


def _opened_events(fixture: dict[str, Any], table_id: str) -> list[events_pb2.Event]:
    """Every event of the table, sealed ones opened with the fixture's sealing key."""
    security = LogSecurity(BatchSigner.generate(), SealingKeys.from_text(fixture["sealing_key"]))
    return [
        event
        for stored in _stored(fixture, table_id)
        for event in security.opened(table_id, stored.batch).events
    ]


def _written_now(events: list[events_pb2.Event]) -> list[events_pb2.Event]:
    """The fact events the writer now writes for the game the log records: its deals and
    actions replayed through the engine, each fact in the typed form."""
    state: Any = None
    created: events_pb2.TableCreated | None = None
    facts: list[events_pb2.Event] = []
    for event in events:
        which = event.WhichOneof("body")
        if which == "table_created":
            created = event.table_created
        elif which == "game_started":
            assert created is not None
            spec = game_spec(created.game)
            options = dict(created.options.values)
            state = spec.new_game(created.seats, options, event.game_started.first_dealer)
        elif which == "deal_shuffled":
            facts.extend(map(fact_event, state.deal(parse_cards(event.deal_shuffled.deck_order))))
        elif which == "action_taken":
            action = parse_action(event.action_taken.action)
            facts.extend(map(fact_event, state.apply(event.action_taken.seat, action)))
    return facts


def test_the_fixture_holds_facts_of_the_old_form_only(fixture: dict[str, Any]) -> None:
    for table_id in fixture["tables"].values():
        events = _opened_events(fixture, table_id)
        facts = [event.fact_recorded for event in events if event.HasField("fact_recorded")]
        assert facts and all(
            fact.HasField("fact") and fact.WhichOneof("body") is None for fact in facts
        )


@pytest.mark.parametrize("game", ["hearts", "whist", "358", "belote"])
def test_old_facts_read_as_what_the_writer_now_writes_for_the_same_game(
    fixture: dict[str, Any], game: str
) -> None:
    events = _opened_events(fixture, fixture["tables"][game])
    read = [typed_event(event) for event in events if event.HasField("fact_recorded")]
    assert read == _written_now(events)


@pytest.mark.parametrize("game", ["hearts", "whist", "358", "belote"])
def test_the_old_log_audits_and_its_record_holds_the_facts(
    fixture: dict[str, Any], game: str
) -> None:
    table_id = fixture["tables"][game]
    batches = _stored(fixture, table_id)
    verifier = BatchVerifier([load_public_key(fixture["signing_public_key"])])

    report = audit_log(table_id, batches, verifier=verifier, signed_from=fixture["signed_from"])

    assert report.ok, [str(problem) for problem in report.problems]
    record = record_from_batches(table_id, [stored.batch for stored in batches])
    assert record["deals"] and all(deal["tricks"] for deal in record["deals"])
    scored = [deal for deal in record["deals"] if deal["scores"] is not None]
    assert scored and all(len(deal["totals"]) == record["players"] for deal in scored)


def _project(
    messages: list[StoredMessage], names: LogNames, verifier: BatchVerifier | None, signed: int
) -> list[Any]:
    folded = Projection({}, verifier=verifier, signed_from=signed)
    for message in messages:
        assert folded.apply(decode(message, names))
    # the chain and signature columns say how the batches were checked, not what they hold
    return [
        replace(row, last_batch_sha256=b"", signed=False) if isinstance(row, GameRow) else row
        for row in folded.changed()
    ] + list(folded.finished)


def _rewritten(data: bytes, typed: list[events_pb2.Event]) -> bytes:
    """The batch with each public fact in the typed form (sealed events, which the projection
    does not open, stay as they are)."""
    batch = events_pb2.EventBatch.FromString(data)
    for event in batch.events:
        if event.HasField("fact_recorded"):
            event.CopyFrom(typed.pop(0))
    return batch.SerializeToString()


def test_the_projection_folds_the_old_log_as_it_folds_the_new_form(
    fixture: dict[str, Any],
) -> None:
    names = LogNames.from_prefix(fixture["prefix"])
    verifier = BatchVerifier([load_public_key(fixture["signing_public_key"])])
    old: list[StoredMessage] = []
    new: list[StoredMessage] = []
    for table_id in fixture["tables"].values():
        events = [
            event
            for stored in _stored(fixture, table_id)
            for event in stored.batch.events
            if event.HasField("fact_recorded")
        ]
        typed = [typed_event(event) for event in events]
        for message in fixture["messages"]:
            if not message["subject"].endswith(f".{table_id}"):
                continue
            sequence, subject = message["sequence"], message["subject"]
            data = base64.b64decode(message["data"])
            old.append(StoredMessage(sequence, subject, data, message["headers"], STORED_AT))
            new.append(StoredMessage(sequence, subject, _rewritten(data, typed), {}, STORED_AT))

    rows = _project(old, names, verifier, fixture["signed_from"])

    assert rows == _project(new, names, None, fixture["signed_from"])
    deals = [row for row in rows if isinstance(row, DealRow)]
    assert {deal.contract for deal in deals} > {""}
    assert any(row.score is not None for row in rows if isinstance(row, DealSeatRow))
