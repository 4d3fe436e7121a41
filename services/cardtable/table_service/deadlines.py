"""The turn-timer deadlines of the tables a replica holds, soonest first.

The timers poll twenty times a second. Looking through every table in memory each time cost
more the longer the service ran (tables in memory, and the lobby's summaries, only
accumulate), so a table's deadline is filed here when the table changes, and a poll only
takes what is due.
"""

from __future__ import annotations

import heapq


class DeadlineBook:
    """One live deadline per table, in a heap.

    A table whose timer moves on files its new deadline; the old heap entry stays behind,
    stale, and is skipped when it comes up, which is cheaper than removing it from the
    middle of the heap. Stale entries wait for their own deadline, so with long timers they
    could pile up: once they outnumber the live ones twice over, the heap is rebuilt from
    the live ones.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._live: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._live)

    def schedule(self, table_id: str, deadline: float) -> None:
        """``table_id``'s deadline is now ``deadline`` (replacing any other)."""
        if self._live.get(table_id) == deadline:
            return
        self._live[table_id] = deadline
        heapq.heappush(self._heap, (deadline, table_id))
        if len(self._heap) > 2 * len(self._live) + 1024:
            self._heap = [(due, table) for table, due in self._live.items()]
            heapq.heapify(self._heap)

    @property
    def entries(self) -> int:
        """Heap entries, stale ones included: what the book costs in memory."""
        return len(self._heap)

    def cancel(self, table_id: str) -> None:
        """``table_id`` has no deadline any more."""
        self._live.pop(table_id, None)

    def pop_due(self, now: float) -> list[str]:
        """The tables whose deadline is ``now`` or earlier, soonest first; no longer filed."""
        due: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            deadline, table_id = heapq.heappop(self._heap)
            if self._live.get(table_id) == deadline:
                del self._live[table_id]
                due.append(table_id)
        return due
