"""Seats waiting for room at a full bot-service replica, and which one gets the next free seat.

Pure bookkeeping: no asyncio, no clock (the caller passes times in), no calls. The supervisor
puts a seat here when it is offered one it has no room for, and asks for the next one whenever
a seat of its own frees up.

Which seat goes next:

* A creator's *share* is ``max(1, max_seats // creators)``: the replica's seats divided
  evenly between the players whose tables it plays or has waiting (``creators``). Seats of a
  creator holding fewer seats than its share go before any seat of a creator at or above it,
  so a player who created hundreds of tables takes no more free seats while another player's
  table waits.
* Among those, the table that has waited longest goes first, its seats one after the other:
  a table whose seats are taken together starts playing at once.
* When only creators at or above their share wait, the longest-waiting of their tables goes
  first: a free seat is never left idle while a seat waits. Nothing is taken away from a
  creator holding more than its share (its games are being played); it simply gets no new
  seat until the others have theirs.

The queue is bounded (memory): when it is full, a new seat pushes out the newest waiting seat
of the creator with the most seats waiting, or is itself turned away when that is its own
creator (ties included), so one creator's flood cannot push out the others. A seat turned away
is not lost: the next scan of running tables offers it again, and meanwhile the table service's
own fallback moves for it.

A table whose creator is not known (a request from a table service older than that field)
counts as the creator ``""``, one for all such tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

SeatKey = tuple[str, int]


@dataclass(frozen=True)
class WaitingSeat:
    """One seat in the queue."""

    table_id: str
    seat: int
    creator: str
    #: When the seat began to wait, on the caller's clock.
    since: float
    #: The place of its table in the queue: a table queued earlier has a smaller number.
    order: int


@dataclass
class _WaitingTable:
    creator: str
    order: int
    #: Each waiting seat and when it began to wait.
    seats: dict[int, float]


class SeatQueue:
    """The seats one replica has no room for yet, in the order they will get it."""

    def __init__(self, *, max_seats: int, limit: int) -> None:
        if max_seats < 1 or limit < 1:
            raise ValueError("max_seats and limit must be at least 1")
        #: The replica's seats, which the creators share.
        self.max_seats = max_seats
        #: Seats that may wait at most.
        self.limit = limit
        self._tables: dict[str, _WaitingTable] = {}
        #: Each creator's waiting tables, in queue order (dicts keep insertion order).
        self._by_creator: dict[str, dict[str, _WaitingTable]] = {}
        self._waiting_by_creator: Counter[str] = Counter()
        self._size = 0
        self._next_order = 0

    # -- reading ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        table = self._tables.get(key[0])
        return table is not None and key[1] in table.seats

    def waiting_at(self, table_id: str) -> int:
        """Seats of the table waiting here."""
        table = self._tables.get(table_id)
        return 0 if table is None else len(table.seats)

    def creators_waiting(self) -> int:
        return len(self._by_creator)

    def oldest_since(self) -> float | None:
        """When the seat that has waited longest began to wait (None: nothing waits)."""
        return min(
            (since for table in self._tables.values() for since in table.seats.values()),
            default=None,
        )

    def seats(self) -> list[WaitingSeat]:
        """Every waiting seat, its table's place in the queue first."""
        return [
            self._seat(table_id, table, seat)
            for table_id, table in sorted(self._tables.items(), key=lambda item: item[1].order)
            for seat in sorted(table.seats)
        ]

    def share(self, holding: Mapping[str, int]) -> int:
        """A creator's share of the replica's seats, given the seats each creator holds."""
        creators = {creator for creator, seats in holding.items() if seats > 0}
        creators.update(self._by_creator)
        return max(1, self.max_seats // max(1, len(creators)))

    # -- changing -----------------------------------------------------------------------------
    def add(self, table_id: str, seat: int, creator: str, now: float) -> WaitingSeat | None:
        """Queue the seat (behind its table's other seats, if some wait already).

        Returns the seat dropped to stay within the limit, which may be this one, or None.
        """
        if (table_id, seat) in self:
            return None
        table = self._tables.get(table_id)
        if table is not None:
            waiting = WaitingSeat(table_id, seat, table.creator, now, table.order)
        else:
            waiting = WaitingSeat(table_id, seat, creator, now, self._next_order)
            self._next_order += 1
        return self._admit(waiting)

    def put_back(self, seat: WaitingSeat) -> WaitingSeat | None:
        """Return a seat taken out by :meth:`next_seat` to its place (taking it failed for
        now). Returns the seat dropped to stay within the limit, or None."""
        if (seat.table_id, seat.seat) in self:
            return None
        table = self._tables.get(seat.table_id)
        if table is not None and table.creator != seat.creator:
            seat = replace(seat, creator=table.creator)
        return self._admit(seat)

    def next_seat(self, holding: Mapping[str, int]) -> WaitingSeat | None:
        """Take out the seat that gets the next free seat (see the module doc), or None.

        ``holding`` is the number of seats each creator's tables hold at the replica now.
        """
        if not self._by_creator:
            return None
        share = self.share(holding)
        below_share = [c for c in self._by_creator if holding.get(c, 0) < share]
        candidates = below_share or list(self._by_creator)
        creator = min(candidates, key=lambda name: self._head(name)[1].order)
        table_id, table = self._head(creator)
        return self._remove(table_id, min(table.seats))

    def discard(self, table_id: str, seat: int) -> WaitingSeat | None:
        """Take the seat out (it no longer needs a computer player); None if it was not in."""
        if (table_id, seat) not in self:
            return None
        return self._remove(table_id, seat)

    def discard_table(self, table_id: str) -> list[WaitingSeat]:
        """Take out every seat of the table (it is over, or gone)."""
        table = self._tables.get(table_id)
        if table is None:
            return []
        return [self._remove(table_id, seat) for seat in sorted(table.seats)]

    def keep_tables(self, table_ids: Collection[str], *, queued_before: float) -> list[WaitingSeat]:
        """Take out the seats that began to wait before ``queued_before`` at tables not in
        ``table_ids`` (the running tables a listing started at that time returned)."""
        gone: list[WaitingSeat] = []
        for table_id, table in list(self._tables.items()):
            if table_id in table_ids:
                continue
            for seat, since in sorted(table.seats.items()):
                if since < queued_before:
                    gone.append(self._remove(table_id, seat))
        return gone

    # -- inside -------------------------------------------------------------------------------
    def _head(self, creator: str) -> tuple[str, _WaitingTable]:
        return next(iter(self._by_creator[creator].items()))

    @staticmethod
    def _seat(table_id: str, table: _WaitingTable, seat: int) -> WaitingSeat:
        return WaitingSeat(table_id, seat, table.creator, table.seats[seat], table.order)

    def _admit(self, seat: WaitingSeat) -> WaitingSeat | None:
        dropped = None
        if self._size >= self.limit:
            victim = self._most_waiting(seat.creator)
            if victim is None:
                return seat
            table_id, table = next(reversed(self._by_creator[victim].items()))
            dropped = self._remove(table_id, max(table.seats))
        self._insert(seat)
        return dropped

    def _most_waiting(self, newcomer: str) -> str | None:
        """The creator to drop a seat of for the newcomer's seat; None: the newcomer's own."""
        most = self._waiting_by_creator[newcomer] + 1
        others = [c for c, count in self._waiting_by_creator.items() if count > most]
        if not others:
            return None
        return max(others, key=lambda c: (self._waiting_by_creator[c], self._tail_order(c)))

    def _tail_order(self, creator: str) -> int:
        return next(reversed(self._by_creator[creator].values())).order

    def _insert(self, seat: WaitingSeat) -> None:
        tables = self._by_creator.setdefault(seat.creator, {})
        tail = next(reversed(tables.values())).order if tables else None
        table = self._tables.get(seat.table_id)
        reorder = False
        if table is None:
            table = self._tables[seat.table_id] = _WaitingTable(seat.creator, seat.order, {})
            tables[seat.table_id] = table
            reorder = tail is not None and seat.order < tail
        elif seat.order < table.order:  # a seat put back to its table's earlier place
            table.order = seat.order
            reorder = True
        if reorder:  # only after a put-back: new tables come last
            self._by_creator[seat.creator] = dict(
                sorted(tables.items(), key=lambda item: item[1].order)
            )
        table.seats[seat.seat] = seat.since
        self._waiting_by_creator[seat.creator] += 1
        self._size += 1

    def _remove(self, table_id: str, seat: int) -> WaitingSeat:
        table = self._tables[table_id]
        removed = self._seat(table_id, table, seat)
        del table.seats[seat]
        if not table.seats:
            del self._tables[table_id]
            tables = self._by_creator[table.creator]
            del tables[table_id]
            if not tables:
                del self._by_creator[table.creator]
        self._waiting_by_creator[table.creator] -= 1
        if not self._waiting_by_creator[table.creator]:
            del self._waiting_by_creator[table.creator]
        self._size -= 1
        return removed
