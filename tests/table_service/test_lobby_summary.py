"""Lobby entries across versions: an entry written before a field existed still reads."""

from __future__ import annotations

import gc
import json

from cardtable.table_service.lobby_index import LobbyIndex, TableSummary
from cardtable.table_service.servicer import _summary_message


def test_an_entry_from_before_the_bot_seat_count_lists_the_count_as_unknown() -> None:
    older = json.dumps(
        {"table_id": "t1", "game": "hearts", "seats": 4, "seats_taken": 4, "status": "running"}
    ).encode()
    summary = TableSummary.from_json(older)
    assert summary.bot_seats is None
    assert not _summary_message(summary).HasField("bot_seats")  # readers must look


def test_a_counted_entry_lists_its_count_even_when_it_is_zero() -> None:
    summary = TableSummary("t2", "belote", 4, 4, "running", bot_seats=0)
    assert TableSummary.from_json(summary.to_json()) == summary
    message = _summary_message(summary)
    assert message.HasField("bot_seats") and message.bot_seats == 0


async def test_the_index_follows_each_table_from_status_to_status() -> None:
    index = LobbyIndex(jetstream=None, bucket="unused")  # type: ignore[arg-type]  # no bucket: memory only
    await index.put(TableSummary("t1", "hearts", 4, 1, "open", created_at=2.0))
    await index.put(TableSummary("t0", "hearts", 4, 1, "open", created_at=1.0))
    await index.put(TableSummary("t1", "hearts", 4, 4, "running", created_at=2.0))
    assert [summary.table_id for summary in index.tables("open")] == ["t0"]
    assert [summary.table_id for summary in index.with_status("running")] == ["t1"]
    await index.put(TableSummary("t1", "hearts", 4, 4, "finished", created_at=2.0))
    assert list(index.with_status("running")) == []
    assert [summary.table_id for summary in index.tables("open", "finished")] == ["t0", "t1"]
    assert [summary.table_id for summary in index.tables()] == ["t0", "t1"]  # oldest first
    assert index.get("t1") == TableSummary("t1", "hearts", 4, 4, "finished", created_at=2.0)
    assert index.get("t0") is not None and index.get("nowhere") is None


async def test_finished_tables_add_nothing_for_the_garbage_collector_to_walk() -> None:
    """A day of finished games is over a million entries: as objects, every full collection
    of the table service would walk them all."""
    index = LobbyIndex(jetstream=None, bucket="unused")  # type: ignore[arg-type]  # no bucket: memory only
    await index.put(TableSummary("warm", "hearts", 4, 4, "finished", options={"quick": "true"}))
    gc.collect()
    tracked_before = len(gc.get_objects())
    finished = [
        TableSummary(
            f"t{number}",
            "hearts",
            4,
            4,
            "finished",
            options={"quick": "true"},
            created_at=float(number),
            finished_at=float(number) + 0.5,
            bot_seats=1,
        )
        for number in range(2000)
    ]
    for summary in finished:
        await index.put(summary)
    del summary
    gc.collect()
    kept = finished[1234]
    del finished
    gc.collect()
    assert len(gc.get_objects()) - tracked_before < 50
    assert index.get("t1234") == kept
    assert len(index.tables("finished")) == 2001
