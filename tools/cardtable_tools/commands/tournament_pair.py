"""``cardtable tournament-pair``: a changed player against the first, board by board on the
same seeds' boards (:mod:`cardtable_tools.tournament_pair`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from cardtable.cli.console import report_console
from cardtable.cli.subcommands import Subcommands
from cardtable_tools.commands.tournament import ReportFileError, read_report


class SideError(ValueError):
    """A side given on the command line that cannot be read, with the reason."""


def read_side(words: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """``NAME REPORT [REPORT ...]``: the compared player's name on that side and its reports."""
    if len(words) < 2:
        raise SideError("give a side as NAME REPORT [REPORT ...], e.g. hard run-seed1.json")
    name, paths = words[0].strip().lower(), words[1:]
    reports = []
    for path in paths:
        report = read_report(path)
        if "board_advantages" not in report.get(name, {}):
            raise SideError(f"{path}: not a `tournament --json` report with a player {name}")
        reports.append(report)
    return name, reports


def verdict(paired: dict[str, Any]) -> str:
    """What the interval says, in a sentence.

    >>> verdict({"ci95": [-1.0, 2.0], "trial_name": "x", "base_name": "hard"})
    'x and hard: no difference these boards can tell'
    >>> verdict({"ci95": [0.5, 2.0], "trial_name": "x", "base_name": "hard"})
    'x is ahead of hard (95% interval clear of zero)'
    """
    low, high = paired["ci95"]
    trial, base = paired["trial_name"], paired["base_name"]
    if low > 0:
        return f"{trial} is ahead of {base} (95% interval clear of zero)"
    if high < 0:
        return f"{trial} is behind {base} (95% interval clear of zero)"
    return f"{trial} and {base}: no difference these boards can tell"


def pair_table(paired: dict[str, Any]) -> Table:
    """Both players' mean advantages over the paired boards and their difference."""
    table = Table(title=f"{paired['game']}: {paired['boards']} boards played by both")
    table.add_column("player")
    table.add_column("mean advantage", justify="right")
    table.add_row(paired["base_name"], f"{paired['base']:+.2f}")
    table.add_row(paired["trial_name"], f"{paired['trial']:+.2f}")
    low, high = paired["ci95"]
    table.add_row("difference", f"{paired['difference']:+.2f} [{low:+.2f}, {high:+.2f}]")
    return table


def cmd_tournament_pair(args: argparse.Namespace) -> int:
    from cardtable_tools.tournament_pair import PairError, pair_reports

    console = report_console()
    try:
        base_name, base = read_side(args.base)
        trial_name, trial = read_side(args.trial)
        paired = pair_reports(base, base_name, trial, trial_name)
    except (ReportFileError, SideError, PairError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    if args.json:
        print(json.dumps(paired))
        return 0
    out = report_console(stderr=False)
    out.print(pair_table(paired))
    if paired["unpaired"]:
        out.print(f"{paired['unpaired']} boards played by one side only are left out")
    out.print(
        f"{verdict(paired)}; difference: {paired['trial_name']}'s advantage less "
        f"{paired['base_name']}'s on each board"
    )
    return 0


def register(commands: Subcommands) -> None:
    """Add ``tournament-pair``."""
    pair = commands.add_parser(
        "tournament-pair",
        help="compare two players board by board on runs of the same seeds",
    )
    pair.add_argument(
        "--base",
        nargs="+",
        required=True,
        metavar="NAME REPORT",
        help="the player to compare against and its runs' `tournament --json` reports",
    )
    pair.add_argument(
        "--trial",
        nargs="+",
        required=True,
        metavar="NAME REPORT",
        help="the changed player (a --variant's name) and its runs on the same seeds",
    )
    pair.add_argument("--json", action="store_true", help="print one JSON object")
    pair.set_defaults(handler=cmd_tournament_pair)
