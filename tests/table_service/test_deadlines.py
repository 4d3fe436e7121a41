"""The deadline book hands out each table's current deadline once it is due, and no other."""

from __future__ import annotations

from cardtable.table_service.deadlines import DeadlineBook


def test_due_tables_come_soonest_first_and_only_once() -> None:
    book = DeadlineBook()
    book.schedule("b", 20.0)
    book.schedule("a", 10.0)
    book.schedule("c", 30.0)
    assert book.pop_due(5.0) == []
    assert book.pop_due(20.0) == ["a", "b"]
    assert book.pop_due(25.0) == []
    assert len(book) == 1


def test_a_moved_deadline_replaces_the_old_one() -> None:
    book = DeadlineBook()
    book.schedule("t", 10.0)
    book.schedule("t", 40.0)  # the table's next turn
    book.schedule("t", 40.0)  # filed again (a view refreshed the table): still one entry
    assert book.pop_due(30.0) == []
    assert book.pop_due(40.0) == ["t"]
    assert book.pop_due(50.0) == []


def test_a_moved_back_deadline_comes_due_at_the_new_time() -> None:
    book = DeadlineBook()
    book.schedule("t", 40.0)
    book.schedule("t", 10.0)
    assert book.pop_due(15.0) == ["t"]
    assert book.pop_due(45.0) == []


def test_a_cancelled_deadline_never_comes_due() -> None:
    book = DeadlineBook()
    book.schedule("t", 10.0)
    book.cancel("t")
    assert book.pop_due(100.0) == [] and len(book) == 0


def test_stale_entries_of_long_timers_do_not_pile_up() -> None:
    book = DeadlineBook()
    for turn in range(10_000):  # one table, an hour-long timer restarted at every move
        book.schedule("t", 3600.0 + turn)
    book.schedule("u", 50.0)
    assert len(book) == 2 and book.entries <= 2 * 2 + 1024 + 1
    assert book.pop_due(100.0) == ["u"]
    assert book.pop_due(3600.0 + 9_998) == []
    assert book.pop_due(3600.0 + 9_999) == ["t"]
