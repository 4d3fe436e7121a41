"""``cardtable fuzz``: hostile requests against a stack of its own."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cardtable.cli.console import report_console
from cardtable.cli.progress import WorkProgress
from cardtable.cli.subcommands import Subcommands
from cardtable.platform.entrypoint import run_async


def cmd_fuzz(args: argparse.Namespace) -> int:
    """Hostile requests against the rules and table services; exit 1 if any was mishandled."""
    from cardtable_tools.hostile import fuzz_stack, render_fuzz_report

    console = report_console()
    with WorkProgress("fuzz", console, unit="requests") as progress:
        progress.start(args.requests)
        report = run_async(fuzz_stack(args.requests, args.seed, progress=progress.update))
    console.print(render_fuzz_report(report))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(report.as_dict(), indent=1))
    print(json.dumps(report.as_dict()))
    return 0 if report.ok else 1


def register(commands: Subcommands) -> None:
    """Add ``fuzz``."""
    fuzz = commands.add_parser(
        "fuzz", help="hostile requests against the rules and table services; how each was answered"
    )
    fuzz.add_argument("--requests", type=int, default=10_000)
    fuzz.add_argument("--seed", type=int, default=1)
    fuzz.add_argument("--json-out", help="also write the report to this file")
    fuzz.set_defaults(handler=cmd_fuzz)
