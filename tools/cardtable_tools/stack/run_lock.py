"""One ``cardtable run`` per run directory.

Two runs in one checkout wrote into the same log files, and the second's ``nats.conf`` and
``env`` replaced the first's while the first still served. The second run now stops at once
and says which process holds the directory. The lock is an advisory ``flock`` that the kernel
releases when its holder dies, so a run killed with SIGKILL leaves nothing to clean up.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "run.lock"


class RunDirectoryBusyError(RuntimeError):
    """Another ``cardtable run`` serves from this directory."""


@contextlib.contextmanager
def run_directory_lock(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir`` for this process, or raise RunDirectoryBusyError with a sentence."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "unknown"
            raise RunDirectoryBusyError(
                f"another cardtable run (pid {holder}) is serving from {run_dir}/; stop it "
                f"first, or give this one its own directory with --log-dir OTHER/logs"
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
