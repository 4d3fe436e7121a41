"""A bench server in a process of its own, as a service would run, for as long as it is used."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cardtable_tools.servers.server_process import free_port

#: How long a server may take to listen before the bench gives up on it.
START_SECONDS = 10.0
HOST = "127.0.0.1"


@dataclass(frozen=True)
class LocalServer:
    address: str
    pid: int


@contextlib.asynccontextmanager
async def local_server(module: str, *args: str) -> AsyncIterator[LocalServer]:
    """Run ``python -m module PORT *args`` on a free loopback port until the block ends."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        str(port),
        *args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(START_SECONDS):
            while True:
                if _listening(port):
                    break
                if process.returncode is not None:
                    raise RuntimeError(f"{module} exited with {process.returncode} at start")
                await asyncio.sleep(0.05)
        yield LocalServer(f"{HOST}:{port}", process.pid)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), 0.1).close()
    except OSError:
        return False
    return True
