"""The system a fault run breaks: its own NATS and PostgreSQL, and the four services.

The servers are always the embedded ones from the pip wheels, even when ``NATS_URL`` or
``DATABASE_URL`` is set: the run must stop and start them, which it cannot do to servers it
did not start (and must not do to someone else's). Each run gets a fresh event prefix and its
own data directory, so nothing of an earlier run is seen. Why they run under keeper processes
is explained in ``fault_servers``.

The services run as separate processes configured through the environment, as in a
container. A killed service is started again with the same settings and port, as a container
restart would; the bot service keeps its ``BOT_REPLICA_ID`` across that restart (in
Kubernetes it is the pod name, which a container restart keeps), so it finds its own seat
claims again instead of waiting for them to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from cardtable.platform.log_names import LogNames
from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.log_security import LogSecurity
from cardtable_tools.bench.fault_servers import KeptServer, KeptServerError
from cardtable_tools.bench.stack import MACHINE_SPEED_PLAYERS
from cardtable_tools.servers.server_process import free_port
from cardtable_tools.stack.processes import ServiceProcess, respawn, spawn, wait_healthy

SERVICES = ("rules", "table", "scoring", "bots")
#: A restarted service that is not healthy after this long is recorded as never recovered.
HEALTHY_LIMIT_SECONDS = 60.0
#: The live projection's schema (the scoring service's default) and the rebuild's.
LIVE_SCHEMA = "scoring"


@dataclass(frozen=True)
class Restart:
    """When a fault ended (wall clock, to compare with log timestamps) and how long until up."""

    restarted_at: float
    server_up_seconds: float | None
    note: str = ""


@dataclass
class FaultStack:
    """The servers and service processes of one fault run, and the ways to break them."""

    nats: KeptServer
    postgres: KeptServer
    services: dict[str, ServiceProcess]
    prefix: str
    tokens: TokenCodec
    #: The table service's log keys: the audit and the rebuild check signatures with them.
    log_keys: LogSecurity

    @property
    def log_names(self) -> LogNames:
        return LogNames.from_prefix(self.prefix)

    @property
    def table_address(self) -> str:
        return self.services["table"].address

    def server(self, name: str) -> KeptServer:
        return {"nats": self.nats, "postgres": self.postgres}[name]

    async def crash_service(self, name: str, down_seconds: float) -> Restart:
        """SIGKILL the service, wait, start it again on its port; time until SERVING."""
        self.services[name].kill()
        await asyncio.sleep(down_seconds)
        restarted_at = time.time()
        fresh = respawn(self.services[name])
        self.services[name] = fresh
        try:
            return Restart(restarted_at, await wait_healthy(fresh, HEALTHY_LIMIT_SECONDS))
        except RuntimeError as error:
            return Restart(restarted_at, None, str(error)[:300])

    async def restart_server(self, name: str, down_seconds: float) -> Restart:
        """Stop the server as an operator would, wait, start it again; time until ready."""
        server = self.server(name)
        await server.stop()
        await asyncio.sleep(down_seconds)
        restarted_at = time.time()
        try:
            return Restart(restarted_at, await server.start())
        except KeptServerError as error:
            return Restart(restarted_at, None, str(error)[:300])

    def dead_services(self) -> list[str]:
        """Services whose current process has exited (we only ever kill and restart them)."""
        return [
            name for name, service in self.services.items() if service.process.poll() is not None
        ]


@contextlib.asynccontextmanager
async def fault_stack(log_dir: Path, data_dir: Path) -> AsyncIterator[FaultStack]:
    """Start the servers, then the four services at once; stop everything on the way out."""
    key = secrets.token_hex(32)
    log_keys = LogSecurity.generate()
    prefix = f"faults{secrets.token_hex(4)}"
    await asyncio.to_thread(log_dir.mkdir, parents=True, exist_ok=True)
    nats, postgres = KeptServer("nats", data_dir), KeptServer("postgres", data_dir)
    services: dict[str, ServiceProcess] = {}
    try:
        await asyncio.gather(nats.start(), postgres.start())
        ports = {name: free_port() for name in SERVICES}
        common = {
            "NATS_URL": nats.url,
            "DATABASE_URL": postgres.url,
            "TOKEN_SIGNING_KEY": key,
            "EVENT_PREFIX": prefix,
            "RULES_ADDRESS": f"127.0.0.1:{ports['rules']}",
            "TABLE_ADDRESS": f"127.0.0.1:{ports['table']}",
            "SCORING_SCHEMA": LIVE_SCHEMA,
            "BOT_STRATEGY": "random",  # cheap moves: the run is about faults, not play
            "BOT_REPLICA_ID": f"{prefix}-bots-0",
            "LOG_LEVEL": "INFO",
        }
        # All four start at once (each waits for what it needs), which halves the start-up.
        for name in SERVICES:
            services[name] = spawn(
                name,
                {
                    **common,
                    **log_keys.service_environment(name),
                    **(MACHINE_SPEED_PLAYERS if name == "table" else {}),
                },
                grpc_port=ports[name],
                log_path=log_dir / f"{name}.log",
            )
        stack = FaultStack(nats, postgres, services, prefix, TokenCodec(key), log_keys)
        for service in services.values():
            await wait_healthy(service, HEALTHY_LIMIT_SECONDS)
        yield stack
    finally:
        for service in services.values():
            await asyncio.to_thread(service.terminate, 10)
        await asyncio.gather(nats.stop(), postgres.stop())
