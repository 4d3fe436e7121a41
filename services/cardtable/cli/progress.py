"""How far long work has got, for people: a bar on a terminal, a line now and then elsewhere.

Every long command (``tournament``, ``bench``, ``bench-scoring``, ``fuzz``, ``export --all``,
``rebuild``) reports through one :class:`WorkProgress` and the same few calls, whatever its
output is: ``start(total)`` once the size of the work is known, ``advance(amount)`` (or
``update(completed, total)`` from a callback that counts for itself) as it goes, ``done()`` at
the end. On a terminal that is a rich progress bar with the count, the rate and the time left.
Anywhere else (a pipe, a file, CI) a bar would print nothing until the end, so a plain line is
written about every ``interval_seconds`` instead, and one when the work is done::

    tournament: 120/400 games, 2.1/s, about 2m13s left
    tournament: 400/400 games in 3m10s, 2.1/s

Both show the rate over the whole step so far and the time left at that rate.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

#: How often a plain line is written when the output is not a terminal.
INTERVAL_SECONDS = 10.0


def duration_text(seconds: float) -> str:
    """A duration as people say it: ``45s``, ``2m50s``, ``1h05m``.

    >>> duration_text(7.4), duration_text(170), duration_text(3900)
    ('7s', '2m50s', '1h05m')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def rate_text(per_second: float) -> str:
    """A rate with as many digits as it needs: ``2,400``, ``12``, ``2.1``, ``0.054``."""
    if per_second >= 10:
        return f"{per_second:,.0f}"
    return f"{per_second:.2g}"


def _count(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def pace_text(completed: float, total: float | None, elapsed: float) -> str:
    """The rate so far and, with a total, the time left at that rate.

    >>> pace_text(120, 400, 57.1)
    '2.1/s, about 2m13s left'
    >>> pace_text(0, 400, 3.0)
    'starting'
    """
    if completed <= 0 or elapsed <= 0:
        return "starting"
    rate = completed / elapsed
    text = f"{rate_text(rate)}/s"
    if total is not None and total > completed:
        text += f", about {duration_text((total - completed) / rate)} left"
    return text


class _PaceColumn(ProgressColumn):
    """The bar's rate and time left, worked out as the plain lines do."""

    def render(self, task: Task) -> Text:
        return Text(
            pace_text(task.completed, task.total, task.elapsed or 0.0), "progress.remaining"
        )


class _CountColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        total = f"/{_count(task.total)}" if task.total is not None else ""
        return Text(f"{_count(task.completed)}{total} {self.unit}".rstrip(), "progress.download")


class WorkProgress:
    """Progress of one command's work, through ``console`` (see the module docstring).

    ``name`` starts every plain line; ``unit`` names what is counted (``games``, ``tables``).
    ``live`` is whether to draw a bar (default: whether ``console`` is a terminal).
    ``clock`` and ``interval_seconds`` decide when a plain line is due; ``heartbeat`` writes
    one when it is due even while nothing advances (a game that takes a minute), from a
    thread. Tests give a clock of their own and no heartbeat, and need no sleeps.
    """

    def __init__(
        self,
        name: str,
        console: Console,
        *,
        unit: str = "",
        live: bool | None = None,
        interval_seconds: float = INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: bool = True,
    ) -> None:
        self.name = name
        self.unit = unit
        self.console = console
        self.live = console.is_terminal if live is None else live
        self.interval_seconds = interval_seconds
        self.clock = clock
        self.step = ""
        self.total: float | None = None
        self.completed = 0.0
        self._began = self._step_began = self._last_line = 0.0
        self._steps = 0
        self._lock = threading.RLock()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._use_heartbeat = heartbeat

    def __enter__(self) -> WorkProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.done(quiet=kind is not None)

    def start(self, total: float | None = None, step: str = "") -> None:
        """Begin the work, or a new step of it, with ``total`` to do (``None``: not known)."""
        with self._lock:
            now = self.clock()
            if not self._steps:
                self._began = self._last_line = now
                self._open()
            self._steps += 1
            self.step, self.total, self.completed = step, total, 0.0
            self._step_began = now
            if self._bar is not None:
                self._task = self._bar.add_task(self._label(), total=total)

    def advance(self, amount: float = 1.0) -> None:
        """``amount`` more of the work is done."""
        with self._lock:
            self.update(self.completed + amount)

    def update(self, completed: float, total: float | None = None, step: str | None = None) -> None:
        """``completed`` of ``total`` done (the total unchanged if ``None``); another ``step``
        name starts that step."""
        with self._lock:
            if not self._steps or (step is not None and step != self.step):
                self.start(total, step or "")
            if total is not None:
                self.total = total
            self.completed = completed
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=completed, total=self.total)
            self._line_if_due()

    def done(self, quiet: bool = False) -> None:
        """The work is over: take the bar away and say how it went (unless ``quiet``)."""
        with self._lock:
            if not self._steps:
                return
            self._stop.set()
            if self._bar is not None:
                self._bar.stop()
                self._bar = None
            if not quiet:
                self.console.print(Text(self._summary()), soft_wrap=True)
            self._steps = 0
        if self._heartbeat is not None and self._heartbeat is not threading.current_thread():
            self._heartbeat.join()
        self._heartbeat = None

    def _open(self) -> None:
        if self.live:
            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                _CountColumn(self.unit),
                _PaceColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
        elif self._use_heartbeat:
            self._stop.clear()
            self._heartbeat = threading.Thread(target=self._beat, daemon=True)
            self._heartbeat.start()

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.interval_seconds)):
            with self._lock:
                if self._steps:
                    self._line_if_due()

    def _label(self) -> str:
        return f"{self.name}: {self.step}" if self.step else self.name

    def _amount(self) -> str:
        total = f"/{_count(self.total)}" if self.total is not None else ""
        return f"{_count(self.completed)}{total} {self.unit}".rstrip()

    def _line_if_due(self) -> None:
        now = self.clock()
        if self.live or now - self._last_line < self.interval_seconds:
            return
        self._last_line = now
        pace = pace_text(self.completed, self.total, now - self._step_began)
        self.console.print(Text(f"{self._label()}: {self._amount()}, {pace}"), soft_wrap=True)

    def _summary(self) -> str:
        now = self.clock()
        took = duration_text(now - self._began)
        if self._steps > 1:
            return f"{self.name}: done in {took}"
        elapsed = now - self._step_began
        rate = (
            f", {rate_text(self.completed / elapsed)}/s" if elapsed > 0 and self.completed else ""
        )
        return f"{self._label()}: {self._amount()} in {took}{rate}"
