"""NATS and PostgreSQL for a fault run, each kept by a small process of its own.

Why not ``DevServer.start()`` from this process: restarting a server forks with a
``preexec_fn`` (for the parent-death signal), and in a process where gRPC is busy, as it is
here with the clients playing, gRPC's fork handlers crash the child before it can exec
(exit -11 in most restarts on this machine). So each server runs under
``python -m cardtable_tools.servers.dev_servers`` (the keeper), which has no gRPC in it; the run
starts that keeper with a plain spawn, stops it with SIGTERM (it stops its server cleanly and
exits), and starts it again on the same port and data directory. The server still cannot
outlive its keeper (parent-death signal), and the keeper is stopped on the way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path

from cardtable_tools.servers.dev_servers import NatsClusterNode
from cardtable_tools.servers.server_process import free_port

#: The keeper prints this once its server accepts work.
READY_LINE = "ready in"
START_LIMIT_SECONDS = 60.0
STOP_LIMIT_SECONDS = 20.0


class KeptServerError(RuntimeError):
    """The keeper exited or took too long before its server was ready."""


class KeptServer:
    """One server (``nats`` or ``postgres``) on a fixed port, data kept under ``data_dir``."""

    def __init__(self, name: str, data_dir: Path, cluster: NatsClusterNode | None = None) -> None:
        self.name = name
        self.data_dir = data_dir
        self.port = free_port()
        #: For one server of a NATS cluster: its place in it (``dev_servers.NatsClusterNode``).
        self.cluster = cluster
        #: The server's own process id (not the keeper's), to kill or pause it alone.
        self.server_pid: int | None = None
        self._keeper: asyncio.subprocess.Process | None = None
        self._drainer: asyncio.Task[None] | None = None

    @property
    def server_name(self) -> str:
        """The name a cluster knows this server by (stream and meta leaders are named by it)."""
        return self.cluster.name if self.cluster is not None else self.name

    def _keeper_arguments(self) -> list[str]:
        arguments = [
            "--only", self.name,
            f"--{self.name}-port", str(self.port),
            "--data-dir", str(self.data_dir),
        ]  # fmt: skip
        if self.cluster is not None:
            arguments += [
                "--cluster-node", str(self.cluster.index),
                "--route-ports", ",".join(str(port) for port in self.cluster.route_ports),
                "--monitor-port", str(self.cluster.monitor_port),
            ]  # fmt: skip
        return arguments

    @property
    def url(self) -> str:
        if self.name == "nats":  # also each server of a cluster
            return f"nats://127.0.0.1:{self.port}"
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def is_running(self) -> bool:
        return self._keeper is not None and self._keeper.returncode is None

    async def start(self) -> float:
        """Start the keeper and wait until the server is ready; the seconds that took."""
        began = time.monotonic()
        keeper = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cardtable_tools.servers.dev_servers",
            *self._keeper_arguments(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        self._keeper = keeper
        assert keeper.stdout is not None
        output: list[str] = []
        try:
            async with asyncio.timeout(START_LIMIT_SECONDS):
                while not any(READY_LINE in line for line in output):
                    line = (await keeper.stdout.readline()).decode(errors="replace")
                    if not line:
                        raise KeptServerError(f"{self.name} did not start:\n{''.join(output)}")
                    output.append(line)
                    if pid := re.search(r"\(pid (\d+),", line):
                        self.server_pid = int(pid[1])
        except TimeoutError:
            await self.stop()
            raise KeptServerError(f"{self.name} not ready in {START_LIMIT_SECONDS:g}s") from None
        # Nothing reads the keeper's output from now on: let it go nowhere instead of a pipe.
        self._drainer = asyncio.create_task(_drain(keeper.stdout))
        return time.monotonic() - began

    async def stop(self) -> None:
        """SIGTERM to the keeper: it stops its server as an operator would, then exits."""
        keeper = self._keeper
        if keeper is None or keeper.returncode is not None:
            return
        keeper.terminate()
        try:
            await asyncio.wait_for(keeper.wait(), STOP_LIMIT_SECONDS)
        except TimeoutError:
            keeper.kill()  # its server then gets the parent-death signal
            await keeper.wait()

    async def crash(self) -> None:
        """SIGKILL the server itself: a crash. Its keeper sees it die and exits."""
        if self.server_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.server_pid, signal.SIGKILL)
        if self._keeper is not None:
            await self._keeper.wait()

    def pause(self) -> None:
        """SIGSTOP the server: alive to the kernel, silent to its peers and clients."""
        if self.server_pid is not None:
            os.kill(self.server_pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.server_pid is not None:
            os.kill(self.server_pid, signal.SIGCONT)


async def _drain(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass
