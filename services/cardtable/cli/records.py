"""``cardtable verify`` and ``cardtable replay``: a game record checked, or shown for people."""

from __future__ import annotations

import argparse
import asyncio
import sys
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cardtable.cli.console import ask, read_json, report_console
from cardtable.cli.log_access import log_settings
from cardtable.cli.subcommands import Subcommands
from cardtable.engine.errors import EngineError
from cardtable.engine.record import GameRecord, load_record, verify_record
from cardtable.replay.html import html_request_problem, viewer_html
from cardtable.replay.session import ReplayError, Viewpoint
from cardtable.replay.show import Pause, replay_request_problem, show_replay


def cmd_verify(args: argparse.Namespace) -> int:
    console = report_console(stderr=False)
    data = read_json(args.file, console)
    if data is None:
        return 2
    try:
        record = load_record(data)
    except EngineError as error:
        console.print(Text.assemble(("cannot read ", "red"), (args.file, "red"), f": {error}"))
        return 2
    report = verify_record(record)
    table = Table(title=f"{record.spec.title}, {record.players} players")
    table.add_column("deal", justify="right")
    for seat in range(record.players):
        table.add_column(f"seat {seat}", justify="right")
    running = [0] * record.players
    for number, scores in report.deal_scores:
        if scores is None:
            table.add_row(str(number), *(["-"] * record.players))
            continue
        running = [total + score for total, score in zip(running, scores, strict=True)]
        cells = [f"{score:+d} ({total})" for score, total in zip(scores, running, strict=True)]
        table.add_row(str(number), *cells)
    console.print(table)
    if not report.ok:
        where = f"deal {report.problem_deal}" if report.problem_deal else "the result"
        action = f", {report.problem_action}" if report.problem_action else ""
        console.print(f"[red]FAILED[/red] at {where}{action}: {report.problem}")
        return 1
    console.print(f"final totals {list(report.totals)}, places {list(report.places)}")
    console.print("[green]OK[/green]: every action is legal and every result matches")
    return 0


def _record_of(args: argparse.Namespace, console: Console) -> dict[str, Any] | None:
    """The record named on the command line: a file, or a table's log exported on the fly."""
    if args.file:
        data = read_json(args.file, console)
        if data is not None and not isinstance(data, dict):
            console.print(
                Text.assemble(
                    ("cannot read ", "red"), (args.file, "red"), ": a game record is a JSON object"
                )
            )
        return data if isinstance(data, dict) else None
    from cardtable.eventlog.reader import log_reader
    from cardtable.eventlog.records import record_from_batches

    async def fetch() -> dict[str, Any]:
        async with log_reader(log_settings()) as reader:
            batches = await reader.table(args.table_id)
        if not batches:
            raise LookupError(f"no table {args.table_id} in the event log")
        return record_from_batches(args.table_id, [stored.batch for stored in batches])

    try:
        return asyncio.run(fetch())
    except (RuntimeError, LookupError, TimeoutError) as error:
        console.print(Text(str(error), style="red"))
        return None


def cmd_replay(args: argparse.Namespace) -> int:
    console = report_console(stderr=False)
    data = _record_of(args, console)
    if data is None:
        return 2
    try:
        record = load_record(data)
    except EngineError as error:
        console.print(Text.assemble(("not a game record: ", "red"), str(error)))
        return 2
    viewpoint = Viewpoint(seat=args.seat, open=args.open)
    problem = replay_request_problem(record, viewpoint, args.deal)
    if problem:
        console.print(Text(problem, style="red"))
        return 2
    if args.html:
        return _write_replay_html(args, record, viewpoint, console)
    pause: Pause | None = None
    if args.step and sys.stdin.isatty() and console.is_terminal:
        pause = partial(ask, console)
    try:
        show_replay(record, viewpoint, console, deal=args.deal, pause=pause)
    except ReplayError as error:
        console.print(
            Text.assemble(
                ("the record stops following the rules at ", "red"),
                str(error),
                " (run cardtable audit for the full check)",
            )
        )
        return 1
    return 0


def _write_replay_html(
    args: argparse.Namespace, record: GameRecord, viewpoint: Viewpoint, console: Console
) -> int:
    """``replay --html FILE``: the game as one self-contained page (replay/html.py)."""
    problem = "--step pauses a terminal; the page steps by itself" if args.step else None
    problem = problem or html_request_problem(record, viewpoint)
    if problem:
        console.print(Text(problem, style="red"))
        return 2
    page = viewer_html(record, viewpoint, deal=args.deal)
    Path(args.html).write_text(page.html, encoding="utf-8")
    console.print(Text(f"wrote {args.html} ({viewpoint.describe()}): open it in a browser"))
    if page.stopped:
        console.print(Text(f"the record stops following the rules at {page.stopped}", "red"))
        return 1
    return 0


def register(commands: Subcommands) -> None:
    """Add ``verify`` and ``replay``."""
    ver = commands.add_parser("verify", help="replay a record and check every action and score")
    ver.add_argument("file")
    ver.set_defaults(handler=cmd_verify)

    rep = commands.add_parser("replay", help="show a recorded game deal by deal, trick by trick")
    rep_source = rep.add_mutually_exclusive_group(required=True)
    rep_source.add_argument("table_id", nargs="?", help="a table id (read from NATS_URL)")
    rep_source.add_argument("--file", help="a game record (JSON)")
    view = rep.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, help="only what this seat saw (default: spectator)")
    view.add_argument("--open", action="store_true", help="all hands open")
    rep.add_argument("--step", action="store_true", help="pause after each trick (terminal)")
    rep.add_argument("--deal", type=int, metavar="K", help="show only the K-th deal")
    rep.add_argument("--html", metavar="FILE", help="write a self-contained page to step through")
    rep.set_defaults(handler=cmd_replay)
