"""Progress of long work: a line about every ten seconds in a log, a bar on a terminal.

The clock is the test's own, so the ten seconds pass without sleeping.
"""

from __future__ import annotations

import doctest
import io
from types import ModuleType

import pytest
from rich.console import Console

from cardtable.cli import progress
from cardtable.cli.progress import WorkProgress
from cardtable_tools import tournament
from cardtable_tools.bench import system
from cardtable_tools.commands import tournament as tournament_command
from cardtable_tools.simulation import bench


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def log_console() -> tuple[Console, io.StringIO]:
    """A console writing to a file, as when the output is kept in a log."""
    out = io.StringIO()
    return Console(file=out, width=120, color_system=None), out


def test_a_log_gets_a_line_about_every_ten_seconds_and_one_at_the_end() -> None:
    console, out = log_console()
    clock = Clock()
    with WorkProgress("tournament", console, unit="games", clock=clock, heartbeat=False) as work:
        work.start(400)
        for _ in range(20):  # 20 games in 9.5 s: no line yet
            clock.now += 0.475
            work.advance()
        assert out.getvalue() == ""
        for _ in range(100):
            clock.now += 0.4757
            work.advance()
    lines = out.getvalue().splitlines()
    assert lines[0] == "tournament: 22/400 games, 2.1/s, about 3m00s left"
    assert len(lines) == 6  # one every ten seconds of the 57 s, and the last
    assert lines[-1] == "tournament: 120/400 games in 57s, 2.1/s"


def test_callbacks_that_count_for_themselves_and_steps_of_their_own() -> None:
    console, out = log_console()
    clock = Clock()
    with WorkProgress("bench-scoring", console, clock=clock, heartbeat=False) as work:
        work.update(0, 10_000, "appending the log")
        clock.now += 11
        work.update(3000, 10_000, "appending the log")
        clock.now += 1
        work.update(500, 2000, "rebuild")  # a new step; the last line was a second ago
        clock.now += 10
        work.update(1500, 2000, "rebuild")
    assert out.getvalue().splitlines() == [
        "bench-scoring: appending the log: 3,000/10,000, 273/s, about 26s left",
        "bench-scoring: rebuild: 1,500/2,000, 150/s, about 3s left",
        "bench-scoring: done in 22s",
    ]


def test_work_of_unknown_size_and_a_failure_say_no_more_than_they_know() -> None:
    console, out = log_console()
    clock = Clock()
    with (
        pytest.raises(RuntimeError),
        WorkProgress("rebuild", console, clock=clock, heartbeat=False) as work,
    ):
        work.start()
        clock.now += 10
        work.advance(50)
        raise RuntimeError("the log went away")
    assert out.getvalue() == "rebuild: 50, 5/s\n"  # no summary after a failure


def test_a_terminal_gets_a_bar_and_the_summary_once_it_is_gone() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    with WorkProgress("fuzz", console, unit="requests", heartbeat=False) as work:
        assert work.live
        work.start(80)
        for _ in range(80):
            work.advance()
    shown = out.getvalue()
    assert "fuzz: 80/80 requests in" in shown
    assert "requests, " not in shown  # no plain progress lines on a terminal


@pytest.mark.parametrize(
    "module",
    [progress, tournament_command, tournament, system, bench],
    ids=lambda module: module.__name__,
)
def test_docstring_examples_pass(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0
