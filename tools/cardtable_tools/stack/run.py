"""``cardtable run``: the whole system on this machine, until Ctrl-C.

Real NATS JetStream and PostgreSQL come from the pip wheels (or from ``NATS_URL`` and
``DATABASE_URL`` when set); each service runs as its own process, configured through the
environment exactly as in a container, and is started only once the one before it reports
healthy. Ctrl-C or SIGTERM stops the services, then the servers; nothing is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from cardtable.platform.log_names import DEFAULT_PREFIX as EVENT_PREFIX
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import provision_when_ready
from cardtable.platform.nats import connect_nats
from cardtable.platform.nats_access import OPERATOR, PROVISIONER, NatsUser
from cardtable.table_service.log_security import LogSecurity
from cardtable_tools.servers.dev_servers import NatsAccessPlan, async_dev_servers
from cardtable_tools.servers.server_process import free_port
from cardtable_tools.stack.demo import play_demo, result_tables
from cardtable_tools.stack.processes import SERVICE_MODULES, ServiceProcess, start
from cardtable_tools.stack.run_env import ENV_FILE, env_file_text, write_env_file
from cardtable_tools.stack.run_lock import RunDirectoryBusyError, run_directory_lock

#: How long a fresh NATS cluster gets to elect its leaders before ``cardtable run`` gives up.
PROVISION_LIMIT_SECONDS = 60.0
DEFAULT_PORTS = {"rules": 50051, "table": 50052, "scoring": 50053, "bots": 50054}


def preferred_port(port: int) -> int:
    """``port`` when it is free on loopback (stable addresses for the README), else any free one."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port


def available_services() -> list[str]:
    """The services this checkout has (later ones arrive with their issues)."""
    names = []
    for name, module in SERVICE_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            names.append(name)
    return names


async def _provision(nats_url: str, provisioner: NatsUser, replicas: int = 1) -> None:
    """Create the stream and buckets as the provisioner: no service may under authorization.

    A cluster that has just started may still be electing its leaders: it is given time.
    """
    connection = await connect_nats(
        nats_url,
        name="cardtable-run-provision",
        credentials=provisioner.credentials,
        inbox_prefix=provisioner.inbox_prefix,
    )
    try:
        await provision_when_ready(
            connection.jetstream,
            LogNames.from_prefix(EVENT_PREFIX),
            replicas,
            timeout_seconds=PROVISION_LIMIT_SECONDS,
            retry_seconds=0.5,
        )
    finally:
        await connection.close()


def _tool_environment(users: dict[str, NatsUser]) -> dict[str, str]:
    """The NATS user the command-line tools connect as: the operator on the embedded server, or
    whatever user this run was itself given for a server named by NATS_URL."""
    if users:
        return users[OPERATOR].environment()
    names = ("NATS_USER", "NATS_PASSWORD", "NATS_PASSWORD_FILE", "NATS_TLS_CA_FILE")
    return {name: os.environ[name] for name in names if os.environ.get(name)}


async def run_stack(
    log_dir: Path,
    say: Callable[[object], None],
    stop: asyncio.Event | None = None,
    *,
    demo: bool = True,
    exit_after_demo: bool = False,
    live: bool = True,
    handle_signals: bool = True,
    listen_host: str = "127.0.0.1",
    nats_cluster: int = 1,
) -> int:
    """Start everything, play the demonstration, print how to reach it, serve until ``stop``.

    The run directory (``log_dir``'s parent: ``.run/``) holds the logs, ``nats.conf`` and
    ``env``; a second run on it is refused (returns 2) rather than writing into the first's.
    With ``nats_cluster`` above 1 NATS is that many clustered servers, the event log and the
    buckets get that many replicas (at most 3: a quorum of a bigger cluster needs no more) and
    every service is given every server's URL.
    """
    try:
        with run_directory_lock(log_dir.parent):
            return await _serve(
                log_dir,
                say,
                stop,
                demo=demo,
                exit_after_demo=exit_after_demo,
                live=live,
                handle_signals=handle_signals,
                listen_host=listen_host,
                nats_cluster=nats_cluster,
            )
    except RunDirectoryBusyError as busy:
        say(Text(str(busy)))
        return 2


async def _serve(
    log_dir: Path,
    say: Callable[[object], None],
    stop: asyncio.Event | None,
    *,
    demo: bool,
    exit_after_demo: bool,
    live: bool,
    handle_signals: bool,
    listen_host: str,
    nats_cluster: int = 1,
) -> int:
    """:func:`run_stack` once the run directory is this process's."""
    stop = stop or asyncio.Event()
    if handle_signals:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
    os.makedirs(log_dir, exist_ok=True)
    key = os.environ.get("TOKEN_SIGNING_KEY") or secrets.token_hex(32)
    log_keys = LogSecurity.generate()
    async with contextlib.AsyncExitStack() as stack:
        nats_url = os.environ.get("NATS_URL")
        database_url = os.environ.get("DATABASE_URL")
        #: Each component's NATS user on the embedded server (none on a server given by URL).
        users: dict[str, NatsUser] = {}
        if not nats_url or not database_url:
            servers = await stack.enter_async_context(
                async_dev_servers(
                    nats=not nats_url,
                    postgres=not database_url,
                    access=None if nats_url else NatsAccessPlan(config_dir=log_dir.parent),
                    nats_cluster=nats_cluster,
                )
            )
            if not nats_url:
                users = servers.nats_users(EVENT_PREFIX)
                await _provision(servers.nats_url, users[PROVISIONER], min(nats_cluster, 3))
            nats_url = nats_url or servers.nats_url
            database_url = database_url or servers.database_url
            say(f"servers from the pip wheels started in {servers.started_in_seconds:.1f} s")
            if users and servers.nats is not None:
                say(
                    "NATS admits only each component's own user (docs/security.md); "
                    f"its configuration: {servers.nats.config_path}"
                )
        say(f"NATS JetStream  {nats_url}")
        say(f"PostgreSQL      {database_url}")
        started: dict[str, ServiceProcess] = {}
        for name in available_services():
            settings = {
                "NATS_URL": nats_url,
                "DATABASE_URL": database_url,
                "TOKEN_SIGNING_KEY": key,
                **log_keys.service_environment(name),
                **(users[name].environment() if name in users else {}),
                "RULES_ADDRESS": started["rules"].address if "rules" in started else "",
                "TABLE_ADDRESS": started["table"].address if "table" in started else "",
                "LOG_LEVEL": "INFO",
                "LISTEN_HOST": listen_host,
            }
            service = await start(
                name,
                settings,
                log_path=log_dir / f"{name}.log",
                grpc_port=preferred_port(DEFAULT_PORTS[name]),
            )
            stack.callback(service.terminate)
            started[name] = service
            say(f"{name:<8} service  {service.address}  (logs: {service.log_path})")
        env_path = log_dir.parent / ENV_FILE
        environment = {
            "NATS_URL": nats_url,
            "DATABASE_URL": database_url,
            "EVENT_PREFIX": EVENT_PREFIX,
            **_tool_environment(users),
            **log_keys.verifying_environment(),
            "TOKEN_SIGNING_KEY": key,
            **{f"{name.upper()}_ADDRESS": service.address for name, service in started.items()},
        }
        bin_dir = Path(sys.executable).parent  # this checkout's .venv/bin, not resolved
        write_env_file(env_path, env_file_text(environment, bin_dir))
        rules_address = started["rules"].address
        say("")
        say(f"in another shell, this sets what the README's commands need ({env_path}, 0600):")
        # Text: printed as is, never read as markup; ``say`` must not wrap: ready to paste
        say(Text(f"  source {env_path}"))
        say(Text('  cardtable call "$RULES_ADDRESS" list'))
        say(Text('  cardtable call "$RULES_ADDRESS" cardtable.rules.v1.RulesService/ListGames'))
        say(Text(f"  (the rules service is at {rules_address}; see README.md for more)"))
        say("")
        if demo and {"table", "scoring", "bots"} <= set(started):
            say("demonstration: one table of each game, computer players in every seat")
            result = await play_demo(
                started["table"].address, started["scoring"].address, key, say, live=live
            )
            say(result_tables(result))
            first = result.tables[0]
            environment["DEMO_TABLE_ID"] = first.table_id
            write_env_file(env_path, env_file_text(environment, bin_dir))
            say(
                f"demonstration finished in {result.seconds:.0f} s; in another shell, replay or "
                "audit a game with:"
            )
            say(Text(f"  source {env_path}"))
            say(Text(f"  cardtable replay {first.table_id} --seat 0"))
            say(Text(f"  cardtable audit {first.table_id}"))
            if exit_after_demo:
                return 0
        say("serving until Ctrl-C ...")
        await stop.wait()
        say("stopping ...")
    return 0
