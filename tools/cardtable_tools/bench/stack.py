"""The whole system for a benchmark: real servers, the four services as processes.

NATS and PostgreSQL come from ``NATS_URL`` / ``DATABASE_URL`` when set, else from the pip
wheels. Every run gets its own event prefix (stream, subjects, buckets) and its own database,
so runs never see each other's data; the database is dropped at the end.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cardtable.platform.log_signing import BatchSigner
from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.log_security import LogSecurity
from cardtable_tools.servers.dev_servers import async_dev_servers
from cardtable_tools.servers.provisioning import create_database, drop_database
from cardtable_tools.stack.processes import ServiceProcess, start

#: The order services start in: each one needs the ones before it.
SERVICES = ("rules", "table", "scoring", "bots")
#: The bench's players move as fast as the machine lets them, far past a person's pace: the
#: per-player rate limit is lifted for them (every other quota stays on).
MACHINE_SPEED_PLAYERS = {"MUTATIONS_PER_SECOND": "100000", "MUTATION_BURST": "100000"}
#: The services that keep their state in PostgreSQL.
NEEDS_POSTGRES = frozenset({"scoring"})


@dataclass
class SystemStack:
    """What a benchmark talks to, and the processes whose CPU it measures."""

    nats_url: str
    #: Empty when no service asked for needs PostgreSQL.
    database_url: str
    prefix: str
    signing_key: str
    tokens: TokenCodec
    services: dict[str, ServiceProcess]
    #: Server processes we started ourselves (embedded wheels), by name; empty for env servers.
    server_pids: dict[str, int] = field(default_factory=dict)
    #: The table service's log signing key: a benchmark that appends its own log signs it with
    #: this, or the scoring service refuses every batch as unsigned.
    log_signer: BatchSigner | None = None

    @property
    def stream(self) -> str:
        return f"{self.prefix}_EVENTS"

    @property
    def table_address(self) -> str:
        return self.services["table"].address


@contextlib.asynccontextmanager
async def system_stack(
    log_dir: Path | None = None,
    services: tuple[str, ...] = SERVICES,
    prefix_stem: str = "bench",
    extra_settings: Mapping[str, Mapping[str, str]] | None = None,
) -> AsyncIterator[SystemStack]:
    """Start the servers (or use the environment's) and ``services``; stop all at the end.

    PostgreSQL is started (and a database made) only when a service asked for needs it.
    ``extra_settings`` adds environment variables per service name (``{"bots": {...}}``).
    """
    key = secrets.token_hex(32)
    log_keys = LogSecurity.generate()
    prefix = f"{prefix_stem}{secrets.token_hex(3)}"
    needs_postgres = bool(NEEDS_POSTGRES & set(services))
    async with contextlib.AsyncExitStack() as stack:
        nats_url = os.environ.get("NATS_URL")
        admin_url = os.environ.get("DATABASE_URL") if needs_postgres else None
        start_nats, start_postgres = not nats_url, needs_postgres and not admin_url
        server_pids: dict[str, int] = {}
        if start_nats or start_postgres:
            servers = await stack.enter_async_context(
                async_dev_servers(nats=start_nats, postgres=start_postgres)
            )
            for server in servers.all:
                if server.pid is not None:
                    server_pids[server.name] = server.pid
            nats_url = nats_url or servers.nats_url
            if start_postgres:
                admin_url = servers.database_url
        assert nats_url is not None
        database_url = ""
        if admin_url:
            database_url = await create_database(admin_url, "bench")
            stack.push_async_callback(drop_database, admin_url, database_url)
        started: dict[str, ServiceProcess] = {}
        for name in services:
            settings = {
                "NATS_URL": nats_url,
                "DATABASE_URL": database_url,
                "TOKEN_SIGNING_KEY": key,
                **log_keys.service_environment(name),
                **(MACHINE_SPEED_PLAYERS if name == "table" else {}),
                "EVENT_PREFIX": prefix,
                "RULES_ADDRESS": started["rules"].address if "rules" in started else "",
                "TABLE_ADDRESS": started["table"].address if "table" in started else "",
                **(extra_settings or {}).get(name, {}),
            }
            log_path = log_dir / f"{name}.log" if log_dir else None
            service = await start(name, settings, log_path=log_path)
            stack.callback(service.terminate)
            started[name] = service
        yield SystemStack(
            nats_url,
            database_url,
            prefix,
            key,
            TokenCodec(key),
            started,
            server_pids,
            log_signer=log_keys.signer,
        )


def process_tree_cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and every live descendant (PostgreSQL's backends)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        # own time plus that of exited children it reaped (PostgreSQL backends that ended)
        times[int(entry.name)] = sum(int(value) for value in fields[11:15]) / ticks
    total, frontier = 0.0, [pid]
    while frontier:
        current = frontier.pop()
        total += times.get(current, 0.0)
        frontier.extend(child for child, parent in parents.items() if parent == current)
    return total
