"""Table services as separate OS processes, for tests that kill and restart them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardtable.platform.server_process import free_port
from tests.table_service.harness import SIGNING_KEY


@dataclass
class ServiceProcess:
    process: subprocess.Popen[bytes]
    address: str

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, exactly like a crash."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)


def spawn_table_process(
    nats_url: str, prefix: str, rules_address: str
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``cardtable.table_service.main`` with its settings in the environment."""
    port = free_port()
    env = {
        **os.environ,
        "NATS_URL": nats_url,
        "RULES_ADDRESS": rules_address,
        "TOKEN_SIGNING_KEY": SIGNING_KEY,
        "EVENT_PREFIX": prefix,
        "GRPC_PORT": str(port),
        "METRICS_PORT": str(free_port()),
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "cardtable.table_service.main"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return process, f"127.0.0.1:{port}"


async def start_table_process(nats_url: str, prefix: str, rules_address: str) -> ServiceProcess:
    """A table service process, once it reports SERVING."""
    process, address = spawn_table_process(nats_url, prefix, rules_address)
    await wait_healthy(address, process)
    return ServiceProcess(process, address)


async def wait_healthy(
    address: str, process: subprocess.Popen[bytes], limit_seconds: float = 30
) -> float:
    """Seconds until the process answers SERVING; fails if it exits first."""
    started = time.monotonic()
    async with grpc.aio.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() - started < limit_seconds:
            if process.poll() is not None:
                error = process.stderr.read().decode() if process.stderr else ""
                raise AssertionError(f"service exited with {process.returncode}: {error[-2000:]}")
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.monotonic() - started
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"service at {address} not healthy after {limit_seconds}s")
