"""When the bot service says in its log that seats wait for a computer player.

An operator must see a shortage at once, and then be reminded while it lasts, but a flood of
seat requests must not become a flood of log lines. So: a warning when seats begin to wait,
then at most one every ``every_seconds`` with the count while they still wait, and a line when
none waits any more (only for a shortage that was warned about). A shortage that ends and
starts again within the interval is not warned about twice. Seats dropped from a full queue
are said the same way: the first at once, then at most one line per interval with the count.

Pure: the caller passes the time in.
"""

from __future__ import annotations

from enum import Enum

#: One line a minute at most while the shortage lasts.
DEFAULT_EVERY_SECONDS = 60.0


class ShortageLine(Enum):
    """The line to write now."""

    STARTED = "started"
    CONTINUES = "continues"
    ENDED = "ended"


class ShortageLog:
    """Decides, from the number of seats waiting over time, which line is due."""

    def __init__(self, every_seconds: float = DEFAULT_EVERY_SECONDS) -> None:
        self._every = every_seconds
        self._since: float | None = None
        self._warned = False
        self._last_warning: float | None = None
        self._last_drop_line: float | None = None
        self._drops_untold = 0

    @property
    def since(self) -> float | None:
        """When seats began to wait in this shortage (None: none waits)."""
        return self._since

    def note(self, waiting: int, now: float) -> ShortageLine | None:
        """The line due now that ``waiting`` seats wait, or None."""
        if waiting <= 0:
            if self._since is None:
                return None
            warned = self._warned
            self._since, self._warned = None, False
            return ShortageLine.ENDED if warned else None
        if self._since is None:
            self._since = now
        if self._last_warning is not None and now - self._last_warning < self._every:
            return None
        self._last_warning = now
        line = ShortageLine.CONTINUES if self._warned else ShortageLine.STARTED
        self._warned = True
        return line

    def dropped(self, now: float) -> int:
        """Count a seat dropped from the full queue; the drops to report now (0: not yet)."""
        self._drops_untold += 1
        if self._last_drop_line is not None and now - self._last_drop_line < self._every:
            return 0
        self._last_drop_line = now
        told, self._drops_untold = self._drops_untold, 0
        return told
