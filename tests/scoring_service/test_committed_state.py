"""The rebuild's memory of what it committed: when a miss means "absent", and when it does not."""

from __future__ import annotations

from datetime import UTC, datetime

from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.rows import GameRow, RatingRow, TableState

AT = datetime(2026, 11, 30, tzinfo=UTC)


def table(table_id: str) -> TableState:
    game = GameRow(
        table_id, "hearts", 4, "{}", "{}", "ann", "", "", "open", 0, None, 0, False, "", 1,
        AT, None, None, None, None,
    )  # fmt: skip
    return TableState(game=game, seats={})


def test_a_fresh_schema_needs_no_reads_and_held_tables_come_back_as_they_were() -> None:
    state = CommittedState()
    held, to_read = state.split_tables(["a", "b"])
    assert (held, to_read) == ({}, [])  # nothing committed yet: nothing to read either
    a = table("a")
    rating = RatingRow("ann", "hearts", 1500.0, 1, AT)
    state.committed({"a": a}, {("ann", "hearts"): rating})
    held, to_read = state.split_tables(["a", "b"])
    assert held == {"a": a} and held["a"] is a and to_read == []
    assert state.split_ratings([("ann", "hearts"), ("bob", "hearts")]) == (
        {("ann", "hearts"): rating},
        [],
    )


def test_dropped_tables_are_read_back_and_only_they() -> None:
    state = CommittedState(max_tables=2)
    state.committed({"a": table("a"), "b": table("b")}, {})
    state.committed({"c": table("c")}, {})  # "a" is the oldest: dropped
    held, to_read = state.split_tables(["a", "b", "c", "new"])
    assert sorted(held) == ["b", "c"] and to_read == ["a"]
    state.committed({"a": table("a")}, {})  # read back and committed again: held once more
    held, to_read = state.split_tables(["a"])
    assert list(held) == ["a"] and to_read == []


def test_after_a_failure_everything_is_read_from_the_schema() -> None:
    state = CommittedState()
    state.committed({"a": table("a")}, {("ann", "hearts"): RatingRow("ann", "hearts", 1.0, 1, AT)})
    state.forget()
    assert state.split_tables(["a", "new"]) == ({}, ["a", "new"])
    assert state.split_ratings([("ann", "hearts")]) == ({}, [("ann", "hearts")])
    b = table("b")
    state.committed({"b": b}, {})
    assert state.split_tables(["b", "c"]) == ({"b": b}, ["c"])
