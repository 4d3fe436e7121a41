"""A ``cardtable run`` in a directory of a test's own, as a reader starts it in a first shell.

The tests that run what the README shows (its shell examples, the TypeScript client) need the
stack a reader has after ``make run``: the servers from the wheels, each service its own
process, and ``.run/env`` written for ``source``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

BIN = Path(sys.executable).parent
READY = "serving until Ctrl-C"


def stack_environment() -> dict[str, str]:
    """This process's environment without the settings that would point ``cardtable run`` (or
    a client) at the test run's own servers: the stack is always the embedded one."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in {"NATS_URL", "DATABASE_URL", "TOKEN_SIGNING_KEY", "NATS_USER"}
        and not name.startswith("NATS_PASSWORD")
    }


@contextlib.contextmanager
def cardtable_run(workdir: Path, *arguments: str, start_seconds: float = 240) -> Iterator[Path]:
    """``cardtable run ARGUMENTS`` serving from ``workdir/.run/`` until the block ends (Ctrl-C);
    what it printed is in ``workdir/run-output.txt``. Yields ``workdir``."""
    printed = workdir / "run-output.txt"
    with printed.open("w") as output:
        process = subprocess.Popen(
            [str(BIN / "cardtable"), "run", "--log-dir", ".run/logs", *arguments],
            cwd=workdir,
            env=stack_environment(),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + start_seconds
            while READY not in printed.read_text():
                assert process.poll() is None, printed.read_text()
                assert time.monotonic() < deadline, printed.read_text()
                time.sleep(0.5)
            yield workdir
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
