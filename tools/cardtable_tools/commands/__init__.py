"""The tools' subcommands of ``cardtable``, added when cardtable-tools is installed (the
``cardtable.commands`` entry point names :func:`register`)."""

from __future__ import annotations

from cardtable.cli.subcommands import Subcommands
from cardtable_tools.commands import benchmarks, fuzz, run, simulation, tournament, tournament_pair


def register(commands: Subcommands) -> None:
    """Add every tool's subcommands."""
    for group in (simulation, benchmarks, fuzz, tournament, tournament_pair, run):
        group.register(commands)
