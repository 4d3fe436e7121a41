"""The queue of seats waiting at a full replica: its order, the creators' shares, its bound, and
when the log says so. Pure: times are numbers the test chooses."""

from __future__ import annotations

from cardtable.bot_service.seat_queue import SeatQueue, WaitingSeat
from cardtable.bot_service.shortage import ShortageLine, ShortageLog


def _keys(seats: list[WaitingSeat]) -> list[tuple[str, int]]:
    return [(seat.table_id, seat.seat) for seat in seats]


def _take_all(queue: SeatQueue, holding: dict[str, int]) -> list[tuple[str, int]]:
    """Give every waiting seat a free seat in turn, counting each against its creator."""
    taken = []
    while (seat := queue.next_seat(holding)) is not None:
        holding[seat.creator] = holding.get(seat.creator, 0) + 1
        taken.append((seat.table_id, seat.seat))
    return taken


def test_the_longest_waiting_table_goes_first_with_its_seats_together() -> None:
    queue = SeatQueue(max_seats=10, limit=100)
    queue.add("t1", 2, "ann", now=1.0)
    queue.add("t2", 1, "bob", now=2.0)
    queue.add("t1", 3, "ann", now=3.0)  # a later seat of t1 joins its table's place
    queue.add("t1", 1, "ann", now=4.0)
    queue.add("t2", 1, "bob", now=5.0)  # already waiting: no second entry
    assert len(queue) == 4 and ("t1", 3) in queue and ("t3", 1) not in queue
    assert queue.oldest_since() == 1.0
    assert _keys(queue.seats()) == [("t1", 1), ("t1", 2), ("t1", 3), ("t2", 1)]
    assert _take_all(queue, {}) == [("t1", 1), ("t1", 2), ("t1", 3), ("t2", 1)]
    assert len(queue) == 0 and queue.next_seat({}) is None and queue.oldest_since() is None


def test_a_flooding_creator_gets_no_free_seat_while_another_creator_waits() -> None:
    """The attack: one player's tables fill the replica and queue up before anyone else's."""
    queue = SeatQueue(max_seats=6, limit=100)
    for number in range(1, 6):
        for seat in (1, 2, 3):
            queue.add(f"flood-{number}", seat, "mallory", now=float(number))
    queue.add("guest", 1, "alice", now=10.0)
    queue.add("guest", 2, "alice", now=10.0)
    # mallory plays six seats: two creators, a share of three each
    assert queue.share({"mallory": 6}) == 3
    first = queue.next_seat({"mallory": 5})  # one of mallory's seats freed
    assert first is not None and (first.table_id, first.creator) == ("guest", "alice")
    second = queue.next_seat({"mallory": 4, "alice": 1})
    assert second is not None and (second.table_id, second.seat) == ("guest", 2)
    # nobody under the share waits now: the longest-waiting table is served, no seat idles
    third = queue.next_seat({"mallory": 3, "alice": 2})
    assert third is not None and (third.table_id, third.seat) == ("flood-1", 1)


def test_the_share_divides_the_seats_between_the_creators_holding_or_waiting() -> None:
    queue = SeatQueue(max_seats=10, limit=100)
    assert queue.share({}) == 10
    queue.add("a-1", 1, "ann", now=0.0)
    assert queue.share({"ann": 4}) == 10
    assert queue.share({"ann": 4, "bob": 6}) == 5
    assert queue.share({"ann": 4, "bob": 6, "cy": 0}) == 5  # holding nothing: not counted
    queue.add("d-1", 1, "dee", now=0.0)
    assert queue.share({"ann": 4, "bob": 6}) == 3
    assert SeatQueue(max_seats=2, limit=10).share({"a": 1, "b": 1, "c": 1}) == 1


def test_creators_below_their_share_are_served_in_the_order_their_tables_waited() -> None:
    queue = SeatQueue(max_seats=9, limit=100)
    queue.add("ann-1", 1, "ann", now=1.0)
    queue.add("bob-1", 1, "bob", now=2.0)
    queue.add("ann-2", 1, "ann", now=3.0)
    queue.add("cy-1", 1, "cy", now=4.0)
    # a share of three: cy holds three already and waits behind the others
    taken = _take_all(queue, {"cy": 3})
    assert taken == [("ann-1", 1), ("bob-1", 1), ("ann-2", 1), ("cy-1", 1)]


def test_a_seat_put_back_keeps_its_place() -> None:
    queue = SeatQueue(max_seats=4, limit=100)
    queue.add("t1", 1, "ann", now=1.0)
    queue.add("t2", 1, "ann", now=2.0)
    first = queue.next_seat({})
    assert first is not None and first.table_id == "t1"
    queue.add("t3", 1, "ann", now=3.0)
    assert queue.put_back(first) is None
    assert _keys(queue.seats()) == [("t1", 1), ("t2", 1), ("t3", 1)]
    assert _take_all(queue, {}) == [("t1", 1), ("t2", 1), ("t3", 1)]


def test_seats_that_need_no_computer_player_leave_the_queue() -> None:
    queue = SeatQueue(max_seats=4, limit=100)
    queue.add("over", 1, "ann", now=1.0)
    queue.add("over", 2, "ann", now=1.0)
    queue.add("back", 1, "bob", now=2.0)
    queue.add("back", 2, "bob", now=2.0)
    queue.add("late", 1, "cy", now=9.0)
    assert _keys(queue.discard_table("over")) == [("over", 1), ("over", 2)]
    assert queue.discard("back", 2) is not None and queue.discard("back", 2) is None
    # a listing started at 5.0 judges only the seats waiting before it
    gone = queue.keep_tables({"back"}, queued_before=5.0)
    assert gone == [] and _keys(queue.seats()) == [("back", 1), ("late", 1)]
    gone = queue.keep_tables({"back"}, queued_before=10.0)
    assert _keys(gone) == [("late", 1)] and queue.creators_waiting() == 1


def test_a_full_queue_drops_a_seat_of_the_creator_with_the_most_waiting() -> None:
    queue = SeatQueue(max_seats=2, limit=4)
    for number in range(3):
        assert queue.add(f"flood-{number}", 1, "mallory", now=float(number)) is None
    assert queue.add("guest", 1, "alice", now=5.0) is None
    # full: the flood's newest seat makes room for another creator's
    dropped = queue.add("other", 1, "olga", now=6.0)
    assert dropped is not None and (dropped.table_id, dropped.creator) == ("flood-2", "mallory")
    assert len(queue) == 4
    # the flooder's own new seat is turned away, and so is one whose creator would then tie
    # with the most waiting
    turned_away = queue.add("flood-9", 1, "mallory", now=7.0)
    assert turned_away is not None and turned_away.table_id == "flood-9"
    assert _keys(queue.seats()) == [("flood-0", 1), ("flood-1", 1), ("guest", 1), ("other", 1)]
    tied = queue.add("guest-2", 1, "alice", now=8.0)
    assert tied is not None and tied.table_id == "guest-2"
    newcomer = queue.add("new", 1, "nina", now=9.0)
    assert newcomer is not None and newcomer.table_id == "flood-1"
    assert _keys(queue.seats()) == [("flood-0", 1), ("guest", 1), ("other", 1), ("new", 1)]


def test_a_shortage_is_warned_about_at_once_then_once_a_minute() -> None:
    log = ShortageLog(every_seconds=60.0)
    assert log.note(0, now=0.0) is None
    assert log.note(3, now=1.0) is ShortageLine.STARTED and log.since == 1.0
    assert [log.note(waiting, now=1.0 + step) for step, waiting in enumerate(range(4, 40))] == [
        None
    ] * 36
    assert log.note(50, now=61.0) is ShortageLine.CONTINUES
    assert log.note(50, now=62.0) is None
    assert log.note(0, now=70.0) is ShortageLine.ENDED and log.since is None
    # it starts again within the minute: no second warning until the minute is over
    assert log.note(2, now=80.0) is None
    assert log.note(0, now=81.0) is None  # never warned about: no end line either
    assert log.note(2, now=125.0) is ShortageLine.STARTED


def test_drops_are_told_at_once_then_counted_once_a_minute() -> None:
    log = ShortageLog(every_seconds=60.0)
    assert log.dropped(now=0.0) == 1
    assert [log.dropped(now=float(second)) for second in range(1, 30)] == [0] * 29
    assert log.dropped(now=60.0) == 30
