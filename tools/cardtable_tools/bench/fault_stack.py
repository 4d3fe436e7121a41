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
from dataclasses import dataclass, field
from pathlib import Path

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import provision_when_ready
from cardtable.platform.nats import connect_nats
from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.log_security import LogSecurity
from cardtable_tools.bench.fault_cluster import CLUSTER_REPLICAS
from cardtable_tools.bench.fault_servers import KeptServer, KeptServerError
from cardtable_tools.bench.stack import MACHINE_SPEED_PLAYERS
from cardtable_tools.servers.dev_servers import cluster_nodes
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
    #: Where "working again" is measured from: the restart, or for a server of a cluster, which
    #: must go on without it, the fault itself. ``None``: the restart.
    faulted_at: float | None = None
    #: The server hit, by name, when the fault chose one (the leader of the moment).
    server: str = ""

    @property
    def checks_from(self) -> float:
        return self.restarted_at if self.faulted_at is None else self.faulted_at


@dataclass
class FaultStack:
    """The servers and service processes of one fault run, and the ways to break them."""

    #: The first (or only) NATS server.
    nats: KeptServer
    postgres: KeptServer
    services: dict[str, ServiceProcess]
    prefix: str
    tokens: TokenCodec
    #: The table service's log keys: the audit and the rebuild check signatures with them.
    log_keys: LogSecurity
    #: Every server of a NATS cluster (``nats`` is the first); empty for a single server.
    nats_cluster: list[KeptServer] = field(default_factory=list)

    @property
    def replicated_streams(self) -> list[str]:
        """The log and both buckets' streams: each has a replica on every server of a cluster."""
        names = self.log_names
        return [
            names.stream,
            LogNames.bucket_stream(names.lobby_bucket),
            LogNames.bucket_stream(names.claims_bucket),
        ]

    @property
    def nats_url(self) -> str:
        """Every NATS server's URL, as the services are given them."""
        return ",".join(server.url for server in self.nats_cluster or [self.nats])

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
async def fault_stack(
    log_dir: Path, data_dir: Path, nats_cluster: int = 1
) -> AsyncIterator[FaultStack]:
    """Start the servers, then the four services at once; stop everything on the way out.

    With ``nats_cluster`` above 1 NATS is that many clustered servers, each under its own
    keeper, and the log and buckets are provisioned with ``CLUSTER_REPLICAS`` replicas before
    any service starts (a service would otherwise create them with one).
    """
    key = secrets.token_hex(32)
    log_keys = LogSecurity.generate()
    prefix = f"faults{secrets.token_hex(4)}"
    await asyncio.to_thread(log_dir.mkdir, parents=True, exist_ok=True)
    cluster = (
        [KeptServer("nats", data_dir, node) for node in cluster_nodes(nats_cluster)]
        if nats_cluster > 1
        else []
    )
    nats = cluster[0] if cluster else KeptServer("nats", data_dir)
    postgres = KeptServer("postgres", data_dir)
    services: dict[str, ServiceProcess] = {}
    try:
        await asyncio.gather(*(node.start() for node in cluster or [nats]), postgres.start())
        nats_url = ",".join(node.url for node in cluster or [nats])
        if cluster:
            async with await connect_nats(nats_url, name="fault-run-provision") as connection:
                await provision_when_ready(
                    connection.jetstream,
                    LogNames.from_prefix(prefix),
                    CLUSTER_REPLICAS,
                    timeout_seconds=HEALTHY_LIMIT_SECONDS,
                    retry_seconds=0.5,
                )
        ports = {name: free_port() for name in SERVICES}
        common = {
            "NATS_URL": nats_url,
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
        stack = FaultStack(
            nats, postgres, services, prefix, TokenCodec(key), log_keys, nats_cluster=cluster
        )
        for service in services.values():
            await wait_healthy(service, HEALTHY_LIMIT_SECONDS)
        yield stack
    finally:
        for service in services.values():
            await asyncio.to_thread(service.terminate, 10)
        await asyncio.gather(*(node.stop() for node in cluster or [nats]), postgres.stop())
