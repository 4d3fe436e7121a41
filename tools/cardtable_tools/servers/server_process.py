"""A server child process that starts on a fixed port and never outlives us.

The base of the dev servers in ``dev_servers``: launching with an unprivileged account when we
are root, waiting for readiness, clean stop, crash-like kill, and restart on the same port and
data. A server never outlives the process that started it:

* callers stop it on the way out (the context managers in ``dev_servers`` do, Ctrl-C included);
* if the parent dies anyway (``kill -9``, a segfault) Linux delivers the server a signal
  (``PR_SET_PDEATHSIG``). Linux tracks the *thread* that started the child, so start servers
  from a long-lived thread (the main thread or the event loop's), never from a pool worker.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import pwd
import random
import signal
import socket
import stat
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
UNPRIVILEGED_USER = "nobody"
START_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 10.0


class DevServerError(RuntimeError):
    """A dev server could not be found, prepared or started; the message carries its log."""


#: Where listening ports are drawn from: below the kernel's ephemeral range (read from
#: ``ip_local_port_range``), so no outgoing connection can take one before its server binds it.
LISTEN_PORTS_FROM = 10_000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now, for a server to bind a moment later.

    The kernel's own pick (port 0) comes from the ephemeral range, which every outgoing
    connection on the machine also draws from; one of them could hold it by the time the
    server binds. A random free port below that range cannot be taken that way.
    """
    ephemeral_low = _ephemeral_low()
    if ephemeral_low > LISTEN_PORTS_FROM + 1_000:
        for _ in range(50):
            port = random.randrange(LISTEN_PORTS_FROM, ephemeral_low)
            if port in _HANDED_OUT:  # free now, but promised to a server not yet bound
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                try:
                    probe.bind((host, port))
                except OSError:
                    continue
                _HANDED_OUT.add(port)
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        kernels_pick: int = probe.getsockname()[1]
        return kernels_pick


#: Ports this process has handed out: a cluster asks for six at once, and each probe's socket
#: is closed before the next probe, so the same port could otherwise be handed out twice.
_HANDED_OUT: set[int] = set()


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


@dataclass(frozen=True)
class RunAs:
    """The account a server process runs under; ``None`` ids mean "as ourselves"."""

    uid: int | None = None
    gid: int | None = None

    @classmethod
    def unprivileged_if_root(cls) -> RunAs:
        """``nobody`` when we are root (PostgreSQL insists), otherwise ourselves."""
        if os.geteuid() != 0:
            return cls()
        entry = pwd.getpwnam(UNPRIVILEGED_USER)
        return cls(uid=entry.pw_uid, gid=entry.pw_gid)

    def check_can_reach(self, path: Path) -> None:
        """Fail clearly when this account cannot walk down to ``path``.

        initdb would only say "Permission denied". Widening the permissions of someone's
        directories behind their back is not ours to do, so the message says what to change.
        """
        blocked = self.first_blocked(path)
        if blocked is not None:
            raise DevServerError(
                f"PostgreSQL runs as {UNPRIVILEGED_USER} (we are root) and cannot enter "
                f"{blocked}; choose a data directory elsewhere or run: chmod o+x {blocked}"
            )

    def first_blocked(self, path: Path) -> Path | None:
        """The first directory above ``path`` this account may not enter, if any."""
        if self.uid is None:
            return None
        for ancestor in reversed(path.parents):
            mode = ancestor.stat()
            if not (mode.st_mode & stat.S_IXOTH or mode.st_uid == self.uid):
                return ancestor
        return None

    def give(self, path: Path) -> None:
        """Hand ``path`` (recursively) to this account, so the server can write its data."""
        if self.uid is None or self.gid is None:
            return
        for root, dirs, files in os.walk(path):
            os.chown(root, self.uid, self.gid)
            for name in (*dirs, *files):
                os.lchown(os.path.join(root, name), self.uid, self.gid)


def _child_setup(death_signal: signal.Signals) -> Callable[[], None]:
    """What a server's child process runs between fork and exec.

    Python's ``user=``/``group=`` have already switched accounts at this point, which matters
    because changing credentials clears the parent-death signal.
    """
    parent_pid = os.getpid()
    libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None

    def setup() -> None:
        # A stop signal blocked in the parent (some runners do) would be inherited and make
        # the server deaf to it.
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
            if os.getppid() != parent_pid:  # the parent died before prctl took effect
                os.kill(os.getpid(), death_signal)

    return setup


def log_tail(path: Path, lines: int = 30) -> str:
    """The end of a server log, to put the reason for a failure into the exception."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class DevServer(ABC):
    """One server process on a fixed loopback port with a persistent data directory."""

    name: str
    stop_signal: signal.Signals = signal.SIGTERM

    def __init__(self, base_dir: Path, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.base_dir = base_dir
        self.host = host
        self.port = port if port is not None else free_port(host)
        self.log_path = base_dir / f"{self.name}.log"
        self.run_as = RunAs()
        self._process: subprocess.Popen[bytes] | None = None
        self._launched_at = 0.0
        self.started_in_seconds: float | None = None

    @property
    @abstractmethod
    def url(self) -> str:
        """How clients reach the server."""

    @abstractmethod
    def _command(self) -> list[str]:
        """The argv that runs the server in the foreground."""

    @abstractmethod
    def _is_ready(self) -> bool:
        """A quick non-blocking probe: does the server accept work yet?"""

    @abstractmethod
    def _prepare(self) -> None:
        """Set up the data directory before a start; a no-op once it exists."""

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        if self._process is None or self._process.poll() is not None:
            return None
        return self._process.pid

    @property
    def is_running(self) -> bool:
        """Whether our process is alive (not whether it is ready)."""
        return self._process is not None and self._process.poll() is None

    def launch(self) -> None:
        """Start the process without waiting for it to be ready (see ``wait_ready``)."""
        if self.is_running:
            return
        self._prepare()
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: Ctrl-C in a terminal reaches us, not the servers, and we
                # stop them in order; kill() can take out the whole group like a crash would.
                start_new_session=True,
                user=self.run_as.uid,
                group=self.run_as.gid,
                extra_groups=[] if self.run_as.uid is not None else None,
                preexec_fn=_child_setup(self.stop_signal),
            )
        self._launched_at = time.monotonic()

    def _check_alive(self) -> None:
        if self._process is not None and self._process.poll() is not None:
            raise DevServerError(
                f"{self.name} exited with code {self._process.returncode} while starting; "
                f"log {self.log_path}:\n{log_tail(self.log_path)}"
            )

    def _ready_or_timeout(self, deadline: float) -> bool:
        self._check_alive()
        if self._is_ready():
            self.started_in_seconds = time.monotonic() - self._launched_at
            return True
        if time.monotonic() > deadline:
            self.stop()
            raise DevServerError(
                f"{self.name} not ready on port {self.port} in time; "
                f"log {self.log_path}:\n{log_tail(self.log_path)}"
            )
        return False

    def wait_ready(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> None:
        """Block until the server accepts work; raise with its log if it dies or times out."""
        deadline = time.monotonic() + timeout_seconds
        while not self._ready_or_timeout(deadline):
            time.sleep(0.02)

    async def wait_ready_async(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> None:
        """``wait_ready`` without blocking the event loop."""
        deadline = time.monotonic() + timeout_seconds
        while not self._ready_or_timeout(deadline):  # noqa: ASYNC110 - no event to await
            await asyncio.sleep(0.02)

    def start(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> None:
        """Start (again) on the same port and data directory and wait until it is ready."""
        self.launch()
        self.wait_ready(timeout_seconds)

    async def start_async(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> None:
        """``start`` without blocking the event loop; spawns on the loop's own thread."""
        self.launch()
        await self.wait_ready_async(timeout_seconds)

    def stop(self, timeout_seconds: float = STOP_TIMEOUT_SECONDS) -> None:
        """Shut down cleanly, as an operator would; force it if that takes too long."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.send_signal(self.stop_signal)
        try:
            process.wait(timeout_seconds)
        except subprocess.TimeoutExpired:
            self.kill()

    async def stop_async(self, timeout_seconds: float = STOP_TIMEOUT_SECONDS) -> None:
        """``stop`` without blocking the event loop."""
        await asyncio.to_thread(self.stop, timeout_seconds)

    def kill(self) -> None:
        """SIGKILL the server and its children at once: a crash, with no chance to clean up.

        Data written before the kill survives it (the OS still has it), as after a real crash
        of the server process.
        """
        process = self._process
        if process is None or process.poll() is not None:
            return
        with suppress(ProcessLookupError):  # already gone on its own
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def restart(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> None:
        """Stop cleanly and start again on the same port with the same data."""
        self.stop()
        self.start(timeout_seconds)
