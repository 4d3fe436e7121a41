"""Games played through the table service, exported from the log, replayed and audited."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from rich.console import Console

from cardtable.cli.main import main as cli
from cardtable.engine.record import load_record
from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.reader import LogReader
from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import StoredBatch
from cardtable.platform.log_signing import SIGNATURE_HEADER, batch_sha256
from cardtable.replay.audit import AuditReport
from cardtable.replay.session import Viewpoint
from cardtable.replay.show import show_replay
from cardtable.table_service.log_security import LogSecurity
from cardtable_api.events.v1 import events_pb2
from tests.table_service.harness import Cluster, play_to_the_end

GAMES = [("hearts", 4, {"quick": "true"}), ("whist", 3, {}), ("358", 3, {}), ("belote", 4, {})]


async def _finished_table(cluster: Cluster, game: str, seats: int, options: dict[str, str]) -> str:
    host = cluster.player("host")
    table_id = await host.create(game, seats, options)
    players = {seat: cluster.player(f"p{seat}") for seat in range(seats)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    await play_to_the_end(table_id, players, random.Random(game))
    return table_id


async def test_a_table_waiting_for_players_audits_its_log_only(cluster: Cluster) -> None:
    table_id = await cluster.player("host").create("belote", 4)
    await cluster.player("early").join(table_id, 0)
    batches = await _reader(cluster).table(table_id)
    report = _audit(cluster, table_id, batches)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.checks["log"] == report.checks["signatures"] == "passed"
    assert {
        check: outcome
        for check, outcome in report.checks.items()
        if check not in ("log", "signatures")
    } == {
        "format": "not run",
        "shuffle": "not run",
        "rules": "not run",
        "results": "not run",
    }
    assert not _audit(cluster, table_id, batches[:1] + batches[:1]).ok  # its log is checked


def _reader(cluster: Cluster) -> LogReader:
    return LogReader(cluster.nats, cluster.parts.app.store)


def _audit(cluster: Cluster, table_id: str, batches: list[StoredBatch]) -> AuditReport:
    """The audit an operator runs, with the table service's published public keys."""
    return audit_log(table_id, batches, verifier=cluster.parts.app.security.verifier)


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_exported_game_replays_from_every_seat_and_audits_clean(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    table_id = await _finished_table(cluster, game, seats, options)
    batches = await _reader(cluster).table(table_id)
    report = _audit(cluster, table_id, batches)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.checks["log"] == report.checks["signatures"] == "passed"
    assert report.notes == [f"{len(batches)} batches signed by key {_key_id(cluster)}"]
    assert report.shuffle_proofs == report.deals > 0
    record = load_record(record_from_batches(table_id, [stored.batch for stored in batches]))
    for viewpoint in [
        Viewpoint(open=True),
        Viewpoint(),
        *(Viewpoint(seat=s) for s in range(seats)),
    ]:
        console = Console(record=True, width=120, color_system=None)
        show_replay(record, viewpoint, console)
        assert "Deal 1" in console.export_text()


def _key_id(cluster: Cluster) -> str:
    return cluster.parts.app.security.signer.key_id


def _copy(batches: list[StoredBatch]) -> list[StoredBatch]:
    """The batches as an attacker with write access to the store would start from."""
    return [
        StoredBatch(
            type(stored.batch).FromString(stored.payload),
            stored.sequence,
            stored.payload,
            dict(stored.headers),
        )
        for stored in batches
    ]


def _stored_again(batches: list[StoredBatch]) -> list[StoredBatch]:
    """The batches with the bytes of each altered one written again from its parsed form."""
    return [
        StoredBatch(stored.batch, stored.sequence, stored.batch.SerializeToString(), stored.headers)
        if stored.batch != type(stored.batch).FromString(stored.payload)
        else stored
        for stored in batches
    ]


def _signature_problems(report: AuditReport) -> list[str]:
    return [str(problem) for problem in report.problems if problem.check == "signatures"]


def _events(batches: list[StoredBatch], kind: str) -> list[Any]:
    return [event for stored in batches for event in stored.batch.events if event.HasField(kind)]


async def test_tampered_logs_are_caught(cluster: Cluster) -> None:
    table_id = await _finished_table(cluster, "hearts", 4, {"quick": "true"})
    clean = await _reader(cluster).table(table_id)

    changed_card = _copy(clean)
    plays = [
        event
        for event in _events(changed_card, "action_taken")
        if event.action_taken.action.startswith("play ")
    ]
    target = plays[20].action_taken
    target.action = "play AS" if target.action != "play AS" else "play KS"
    report = _audit(cluster, table_id, _stored_again(changed_card))
    assert not report.ok
    assert report.first is not None and report.first.deal == 1
    altered = next(
        stored
        for stored in changed_card
        if stored.batch != type(stored.batch).FromString(stored.payload)
    )
    named = f"batch at stream sequence {altered.sequence} "
    # the altered batch fails its signature, and the next one no longer follows it
    assert _signature_problems(report)[0].startswith(named)
    assert "does not match" in _signature_problems(report)[0]
    assert "does not follow" in _signature_problems(report)[1]

    changed_score = _copy(clean)
    scored = next(
        event.fact_recorded.deal_scored
        for event in _events(changed_score, "fact_recorded")
        if event.fact_recorded.HasField("deal_scored")
    )
    scored.scores[0] += 1
    report = _audit(cluster, table_id, _stored_again(changed_score))
    assert not report.ok and "scores" in str(report.first)

    bad_seed = _copy(clean)
    revealed = _events(bad_seed, "deal_seed_revealed")[0].deal_seed_revealed
    revealed.seed = "00" * 32
    report = _audit(cluster, table_id, _stored_again(bad_seed))
    assert not report.ok and "commitment" in str(report.first)

    unrevealed = _copy(clean)
    for stored in unrevealed:
        kept = [e for e in stored.batch.events if not e.HasField("deal_seed_revealed")]
        del stored.batch.events[:]
        stored.batch.events.extend(kept)
    report = _audit(cluster, table_id, _stored_again(unrevealed))
    assert not report.ok
    assert any("never revealed" in str(problem) for problem in report.problems)

    missing = _copy(clean)
    removed = missing.pop(len(missing) // 2)
    report = _audit(cluster, table_id, missing)
    assert not report.ok
    assert any("missing batch" in str(problem) for problem in report.problems)
    # the batch after the gap names the removed one as its predecessor
    follower = f"stream sequence {clean[len(clean) // 2 + 1].sequence}"
    assert [problem for problem in _signature_problems(report) if follower in problem]
    assert removed.sequence not in [stored.sequence for stored in missing]

    duplicated = _copy(clean)
    duplicated.insert(5, duplicated[4])
    report = _audit(cluster, table_id, duplicated)
    assert any("twice" in str(problem) for problem in report.problems)
    assert any("replayed" in problem for problem in _signature_problems(report))

    reordered = _copy(clean)
    reordered[6], reordered[7] = reordered[7], reordered[6]
    report = _audit(cluster, table_id, reordered)
    assert not report.ok and len(_signature_problems(report)) >= 1

    # a batch written by someone who may publish but holds no signing key
    forged = _copy(clean)
    forger = LogSecurity.generate()
    fake = events_pb2.EventBatch()
    fake.CopyFrom(forged[-1].batch)
    fake.table_version += 1
    fake.previous_batch_sha256 = batch_sha256(forged[-1].payload)
    payload = fake.SerializeToString()
    forged.append(
        StoredBatch(
            fake,
            forged[-1].sequence + 1,
            payload,
            {SIGNATURE_HEADER: forger.signer.sign(payload)},
        )
    )
    report = _audit(cluster, table_id, forged)
    assert _signature_problems(report) == [
        f"batch at stream sequence {forged[-1].sequence} (table version {fake.table_version}): "
        f"signed by unknown key {forger.signer.key_id!r}"
    ]
    unsigned = _copy(clean)
    unsigned[3] = StoredBatch(unsigned[3].batch, unsigned[3].sequence, unsigned[3].payload, {})
    assert "is not signed" in _signature_problems(_audit(cluster, table_id, unsigned))[0]
    no_keys = audit_log(table_id, clean, verifier=None)
    assert not no_keys.ok and "no public keys" in _signature_problems(no_keys)[0]


async def test_export_and_audit_commands(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, nats_url: str, capsys: Any
) -> None:
    table_id = await _finished_table(cluster, "belote", 4, {})
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("EVENT_PREFIX", cluster.names.prefix)
    monkeypatch.delenv("LOG_VERIFYING_KEYS", raising=False)
    monkeypatch.delenv("TABLE_ADDRESS", raising=False)
    assert await _run(cli, ["audit", table_id]) == 1  # no keys: the signatures prove nothing
    assert "no public keys" in capsys.readouterr().out
    monkeypatch.setenv("TABLE_ADDRESS", cluster.table_address)  # keys from GetLogKeys
    assert await _run(cli, ["audit", table_id]) == 0
    monkeypatch.delenv("TABLE_ADDRESS")
    monkeypatch.setenv("LOG_VERIFYING_KEYS", cluster.parts.app.security.signer.public_text())
    out = tmp_path / "game.json"
    assert await _run(cli, ["export", table_id, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["table_id"] == table_id and record["result"]["over"]
    capsys.readouterr()
    assert await _run(cli, ["audit", table_id]) == 0
    audit = capsys.readouterr().out.splitlines()
    assert audit[0] == f"audit of the log of table {table_id}"  # the heading before any check
    assert audit[2].startswith("  ✓ signatures ") and audit[3].startswith("  ✓ log ")
    assert await _run(cli, ["audit", "--file", str(out)]) == 0
    assert await _run(cli, ["audit", "no-such-table"]) == 1
    assert "no table no-such-table in the event log" in capsys.readouterr().out
    folder = tmp_path / "all"
    assert await _run(cli, ["export", "--all", "--since", "2000-01-01", "--out", str(folder)]) == 0
    assert (folder / f"{table_id}.json").exists()
    assert re.search(r"export: (\d+)/\1 tables in", capsys.readouterr().err)
    assert await _run(cli, ["replay", table_id, "--seat", "1"]) == 0
    assert "Deal 1" in capsys.readouterr().out


async def _run(command: Any, argv: list[str]) -> int:
    """The CLI runs its own event loop: run it in a thread, away from the test's loop."""
    import asyncio

    return int(await asyncio.to_thread(command, argv))
