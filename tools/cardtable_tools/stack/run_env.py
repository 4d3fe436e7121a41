"""``.run/env``: the shell settings that reach the stack ``cardtable run`` started.

A newcomer's second shell needs the stack's addresses, the operator's NATS user, the log's
public key and the generated token signing key before any README command works; printing
them inline made commands too long to paste. ``source .run/env`` sets them all, and puts this
checkout's ``.venv/bin`` first on ``PATH`` so ``cardtable`` is found. The file holds secrets,
so it is written with mode 0600 like ``.run/nats.conf``, and replaced whole so a shell never
reads half of it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

ENV_FILE = "env"
_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def env_file_text(variables: Mapping[str, str], bin_dir: Path | None = None) -> str:
    """``export NAME=value`` lines, each value quoted for the shell; ``bin_dir`` first on PATH."""
    lines = ["# written by cardtable run for its stack; use with: source .run/env"]
    for name, value in variables.items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a shell variable name")
        lines.append(f"export {name}={shlex.quote(value)}")
    if bin_dir is not None:
        lines.append(f'export PATH={shlex.quote(str(bin_dir))}:"$PATH"')
    return "\n".join(lines) + "\n"


def write_env_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only, replacing any earlier file."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), 0o600)  # an earlier partial file may have had other bits
        file.write(text)
    os.replace(partial, path)
