"""A writer's memory of what it committed: when a miss means "absent", and when it is stale."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

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


def test_a_position_other_than_the_last_commit_forgets_everything() -> None:
    state = CommittedState()
    state.check_position(0)
    a = table("a")
    state.committed({"a": a}, {}, position=7)
    state.check_position(7)  # nobody wrote since: what is held is still the schema's
    assert state.split_tables(["a"]) == ({"a": a}, [])
    state.check_position(9)  # another writer committed 8 and 9
    assert state.split_tables(["a"]) == ({}, ["a"])
    assert state.position == 9  # from here on, this writer's commits are the schema again


def test_the_live_consumers_state_reads_what_it_does_not_hold_and_stays_bounded() -> None:
    state = CommittedState(max_tables=2, max_ratings=2, complete=False)
    assert state.split_tables(["a"]) == ({}, ["a"])  # a schema with history: read it
    ratings = {(name, "hearts"): RatingRow(name, "hearts", 1.0, 1, AT) for name in "wxyz"}
    state.committed({key: table(key) for key in "abc"}, ratings, position=3)
    assert sorted(state.tables) == ["b", "c"] and sorted(state.ratings) == [
        ("y", "hearts"),
        ("z", "hearts"),
    ]
    held, to_read = state.split_tables(["a", "c"])
    assert list(held) == ["c"] and to_read == ["a"]
    assert state.split_ratings([("w", "hearts")]) == ({}, [("w", "hearts")])


def test_a_complete_state_cannot_drop_ratings() -> None:
    with pytest.raises(ValueError, match="keeps every rating"):
        CommittedState(max_ratings=10)
