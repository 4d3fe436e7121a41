"""``cardtable``: the command line for records, replays, audits and operations.

Each subcommand is a small function that parses nothing itself: argparse builds the
arguments, the function calls the library and prints. Machine output is JSON on stdout;
progress and tables for people go to stderr through rich, so pipes stay clean.

Commands come in groups, one module each. The tools' distribution (cardtable-tools:
benchmarks, fuzzing, simulations, the local stack) adds its groups through the
``cardtable.commands`` entry point when it is installed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any

from cardtable.cli import call, operations, records, token
from cardtable.cli.console import report_console
from cardtable.engine.errors import EngineError

#: The entry-point group through which another distribution adds subcommands.
COMMAND_GROUPS = "cardtable.commands"


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: this package's groups, then every installed plugin's."""
    parser = argparse.ArgumentParser(prog="cardtable", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (records, operations, token, call):
        group.register(commands)
    for plugin in entry_points(group=COMMAND_GROUPS):
        plugin.load()(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; its exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: Any = args.handler(args)
    except EngineError as error:
        report_console().print(f"[red]error:[/red] {error}")
        return 2
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
