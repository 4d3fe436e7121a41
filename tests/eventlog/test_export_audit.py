"""Games played through the table service, exported from the log, replayed and audited."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from google.protobuf import struct_pb2
from rich.console import Console

from cardtable.cli.main import main as cli
from cardtable.engine.record import load_record
from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.reader import LogReader
from cardtable.eventlog.records import record_from_batches
from cardtable.replay.session import Viewpoint
from cardtable.replay.show import show_replay
from cardtable.table_service.store import StoredBatch
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
    report = audit_log(table_id, batches)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.checks["log"] == "passed"
    assert {check: outcome for check, outcome in report.checks.items() if check != "log"} == {
        "format": "not run",
        "shuffle": "not run",
        "rules": "not run",
        "results": "not run",
    }
    assert not audit_log(table_id, batches[:1] + batches[:1]).ok  # its log is still checked


def _reader(cluster: Cluster) -> LogReader:
    return LogReader(cluster.nats, cluster.parts.app.store)


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_exported_game_replays_from_every_seat_and_audits_clean(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    table_id = await _finished_table(cluster, game, seats, options)
    batches = await _reader(cluster).table(table_id)
    report = audit_log(table_id, batches)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.checks["log"] == "passed"
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


def _copy(batches: list[StoredBatch]) -> list[StoredBatch]:
    return [
        StoredBatch(
            type(stored.batch).FromString(stored.batch.SerializeToString()), stored.sequence
        )
        for stored in batches
    ]


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
    report = audit_log(table_id, changed_card)
    assert not report.ok
    assert report.first is not None and report.first.deal == 1

    changed_score = _copy(clean)
    scored = next(
        event.fact_recorded.fact
        for event in _events(changed_score, "fact_recorded")
        if event.fact_recorded.fact.kind == "DealScored"
    )
    scores = scored.fields["scores"]
    assert isinstance(scores, struct_pb2.ListValue)
    scores.values[0].number_value += 1
    report = audit_log(table_id, changed_score)
    assert not report.ok and "scores" in str(report.first)

    bad_seed = _copy(clean)
    revealed = _events(bad_seed, "deal_seed_revealed")[0].deal_seed_revealed
    revealed.seed = "00" * 32
    report = audit_log(table_id, bad_seed)
    assert not report.ok and "commitment" in str(report.first)

    unrevealed = _copy(clean)
    for stored in unrevealed:
        kept = [e for e in stored.batch.events if not e.HasField("deal_seed_revealed")]
        del stored.batch.events[:]
        stored.batch.events.extend(kept)
    report = audit_log(table_id, unrevealed)
    assert not report.ok and "never revealed" in str(report.first)

    missing = _copy(clean)
    del missing[len(missing) // 2]
    report = audit_log(table_id, missing)
    assert not report.ok
    assert any("missing batch" in str(problem) for problem in report.problems)

    duplicated = _copy(clean)
    duplicated.insert(5, duplicated[4])
    report = audit_log(table_id, duplicated)
    assert any("twice" in str(problem) for problem in report.problems)


async def test_export_and_audit_commands(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, nats_url: str, capsys: Any
) -> None:
    table_id = await _finished_table(cluster, "belote", 4, {})
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("EVENT_PREFIX", cluster.names.prefix)
    out = tmp_path / "game.json"
    assert await _run(cli, ["export", table_id, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["table_id"] == table_id and record["result"]["over"]
    assert await _run(cli, ["audit", table_id]) == 0
    assert await _run(cli, ["audit", "--file", str(out)]) == 0
    folder = tmp_path / "all"
    assert await _run(cli, ["export", "--all", "--since", "2000-01-01", "--out", str(folder)]) == 0
    assert (folder / f"{table_id}.json").exists()
    assert await _run(cli, ["replay", table_id, "--seat", "1"]) == 0
    assert "Deal 1" in capsys.readouterr().out


async def _run(command: Any, argv: list[str]) -> int:
    """The CLI runs its own event loop: run it in a thread, away from the test's loop."""
    import asyncio

    return int(await asyncio.to_thread(command, argv))
