"""Lobby entries across versions: an entry written before a field existed still reads."""

from __future__ import annotations

import json

from cardtable.table_service.lobby_index import TableSummary
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
