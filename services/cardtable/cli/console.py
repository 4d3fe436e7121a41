"""What every ``cardtable`` command shares: consoles for reports, ``--option`` pairs, JSON
files read with a sentence when they cannot be."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

REPORT_WIDTH = 120  # columns for tables written to a file or a pipe


def report_console(stderr: bool = True) -> Console:
    """A console for reports: a terminal's own width, else ``REPORT_WIDTH`` columns.

    Rich falls back to 80 columns when its output is not a terminal, which cut the bench's
    table headings to "move…"; ``COLUMNS`` still decides where it is set.
    """
    console = Console(stderr=stderr)
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    return Console(stderr=stderr, width=REPORT_WIDTH)


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """``--option key=value`` pairs as a dict."""
    options = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator:
            raise argparse.ArgumentTypeError(f"--option takes key=value, not {pair!r}")
        options[key.strip()] = value.strip()
    return options


def read_json(path: str, console: Console) -> Any:
    """The file's JSON, or ``None`` after saying why it cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, not JSON, too long a number
        console.print(Text.assemble(("cannot read ", "red"), (path, "red"), f": {error}"))
    except RecursionError:
        console.print(Text.assemble(("cannot read ", "red"), (path, "red"), ": nested too deeply"))
    return None


def ask(console: Console, prompt: str) -> str:
    """A line typed at the terminal (replay --step's pause)."""
    return console.input(Text(prompt, style="dim"))
