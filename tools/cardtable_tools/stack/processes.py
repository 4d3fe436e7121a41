"""Service processes: start one with its settings in the environment, wait until it is healthy.

``make run``, the benchmarks and the tests that kill and restart services all start the
services the way an operator would: one OS process each, configured by environment variables,
ready once its gRPC health check answers SERVING.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardtable_tools.servers.server_process import free_port

#: The module each service runs as (``python -m ...``).
SERVICE_MODULES = {
    "rules": "cardtable.rules_service.main",
    "table": "cardtable.table_service.main",
    "scoring": "cardtable.scoring_service.main",
    "bots": "cardtable.bot_service.main",
}


@dataclass
class ServiceProcess:
    """A running service: its process, its gRPC address, the settings it was given."""

    name: str
    process: subprocess.Popen[bytes]
    grpc_port: int
    metrics_port: int
    env: dict[str, str] = field(repr=False)
    log_path: Path | None = None
    #: Without a log file, its standard error goes to an unnamed temporary file (never to a
    #: pipe: nobody reads a pipe while the service runs, and a full one would stop it).
    error_file: IO[bytes] | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, exactly like a crash."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self, timeout_seconds: float = 20) -> int:
        """SIGTERM, then SIGKILL if it does not stop in time; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout_seconds)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(10)

    def cpu_seconds(self) -> float:
        """User + system CPU time the process has used so far (Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks


def spawn(
    name: str,
    settings: Mapping[str, str],
    *,
    grpc_port: int | None = None,
    log_path: Path | None = None,
) -> ServiceProcess:
    """Start service ``name`` with ``settings`` added to the environment; does not wait."""
    grpc_port = grpc_port or free_port()
    metrics_port = free_port()
    env = {
        **os.environ,
        "GRPC_PORT": str(grpc_port),
        "METRICS_PORT": str(metrics_port),
        "LOG_LEVEL": "WARNING",
        **settings,
    }
    output = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    errors = None if log_path else tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", SERVICE_MODULES[name]],
        env=env,
        stdout=output,
        stderr=output if log_path else errors,
    )
    return ServiceProcess(name, process, grpc_port, metrics_port, env, log_path, errors)


def respawn(service: ServiceProcess) -> ServiceProcess:
    """The same service again, on the same port with the same settings (after a kill)."""
    errors = None if service.log_path else tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", SERVICE_MODULES[service.name]],
        env=service.env,
        stdout=open(service.log_path, "ab") if service.log_path else subprocess.DEVNULL,  # noqa: SIM115
        stderr=subprocess.STDOUT if service.log_path else errors,
    )
    return ServiceProcess(
        service.name,
        process,
        service.grpc_port,
        service.metrics_port,
        service.env,
        service.log_path,
        errors,
    )


async def wait_healthy(service: ServiceProcess, limit_seconds: float = 30) -> float:
    """Seconds until the service answers SERVING; raises if it exits or takes too long."""
    started = time.monotonic()
    async with grpc.aio.insecure_channel(service.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() - started < limit_seconds:
            if service.process.poll() is not None:
                raise RuntimeError(
                    f"{service.name} service exited with {service.process.returncode}: "
                    f"{_error_output(service)}"
                )
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.monotonic() - started
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{service.name} service not healthy after {limit_seconds}s")


def _error_output(service: ServiceProcess) -> str:
    if service.log_path is not None:
        return service.log_path.read_text(errors="replace")[-2000:]
    if service.error_file is not None:
        service.error_file.seek(0)
        return service.error_file.read().decode(errors="replace")[-2000:]
    return ""


async def start(
    name: str,
    settings: Mapping[str, str],
    *,
    log_path: Path | None = None,
    grpc_port: int | None = None,
) -> ServiceProcess:
    """Spawn a service and wait until it is healthy."""
    service = spawn(name, settings, log_path=log_path, grpc_port=grpc_port)
    try:
        await wait_healthy(service)
    except BaseException:
        service.kill()
        raise
    return service
