"""A ``cardtable run`` of a test's own, and shell commands run against it as a user would.

The README's examples and the client examples under ``examples/`` are run the way a reader runs
them: ``cardtable run`` serving in one directory, and in a second shell, from that directory,
``source .run/env`` then the command. :func:`running_stack` starts the first; :func:`run_shell`
is the second shell, with a clean environment (only what ``.run/env`` sets, and the ``PATH``
given), so a command cannot lean on anything of the test run's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: This checkout: the examples' paths are relative to it.
REPO = Path(__file__).resolve().parents[2]
#: This checkout's ``.venv/bin`` (what ``.run/env`` puts first on ``PATH``).
BIN = Path(sys.executable).parent
#: What ``cardtable run`` prints once every service is up (and the demonstration, if any, shown).
READY = "serving until Ctrl-C"
#: The test run's own servers and credentials, never passed on: the stack starts its own.
_NOT_PASSED_ON = {"NATS_URL", "DATABASE_URL", "TOKEN_SIGNING_KEY", "NATS_USER"}


def stack_environment() -> dict[str, str]:
    """This process's environment without the settings that would point ``cardtable run`` (or
    a client) at the test run's own servers: the stack is always the embedded one."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in _NOT_PASSED_ON and not name.startswith("NATS_PASSWORD")
    }


@contextmanager
def running_stack(
    workdir: Path, *, demo: bool = True, ready_seconds: float = 240
) -> Iterator[Path]:
    """``cardtable run`` serving from ``workdir/.run/`` until the block ends (then Ctrl-C).

    Its servers are always the embedded ones, never a ``NATS_URL`` of the test run's. With
    ``demo`` it plays its demonstration first, so ``DEMO_TABLE_ID`` names a finished game.
    Everything it printed is in ``workdir/run-output.txt``.
    """
    environment = stack_environment()
    command = [str(BIN / "cardtable"), "run", "--log-dir", ".run/logs"]
    if not demo:
        command.append("--no-demo")
    printed = workdir / "run-output.txt"
    with printed.open("w") as output:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + ready_seconds
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


def run_shell(
    code: str,
    workdir: Path,
    *,
    source_env: bool = True,
    path: str = "/usr/bin:/bin",
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """``code`` run by bash with ``set -euo pipefail`` in ``workdir``, after ``source .run/env``
    unless ``source_env`` is false, in a clean environment whose ``PATH`` is ``path`` (before
    ``.run/env`` puts ``.venv/bin`` in front)."""
    prologue = "set -euo pipefail\n" + ("source .run/env\n" if source_env else "")
    environment = {"HOME": str(workdir), "PATH": path, "LANG": "C.UTF-8", "COLUMNS": "120"}
    if "TMPDIR" in os.environ:
        environment["TMPDIR"] = os.environ["TMPDIR"]
    return subprocess.run(
        ["bash", "-c", prologue + code],
        cwd=workdir,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
