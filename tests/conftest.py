"""Real NATS JetStream and PostgreSQL for the tests that ask for them, and nothing for the rest.

Session fixtures (started at most once, and only when a test requests them):

* ``nats_url``: a NATS server with JetStream;
* ``database_url``: a PostgreSQL superuser URL (the ``postgres`` database);
* ``nats_service`` / ``postgres_service``: the same servers as ``Provisioned`` records, whose
  ``.server`` lets a fault test stop, kill and restart a server this run started (it is
  ``None`` for a server from the environment or a container). A fault test that must not
  disturb the others can instead start its own with ``dev_servers()``.

Each comes from ``NATS_URL``/``DATABASE_URL`` when set, else a testcontainer when Docker
answers, else the embedded wheel servers (see ``cardtable.platform.provisioning``). A test that
asks for one and cannot get it errors; it is never skipped. The source used is printed in the
terminal summary.

Function fixtures keep tests apart on those shared servers:

* ``fresh_database_url``: a newly created, empty database, dropped afterwards;
* ``pg_pool``: an asyncpg pool on that database;
* ``nats_namespace``: a unique stream/subject prefix, whose streams are deleted afterwards;
* ``nats_connection``: a connected client and JetStream context, drained afterwards.

Tests using any of these are marked ``services`` automatically (``-m "not services"`` skips
them all); a test that starts servers or service processes of its own is marked by hand.

Hypothesis runs the ``default`` profile registered here (fewer examples, the property tests'
run time in the tens of seconds); ``HYPOTHESIS_PROFILE=thorough`` runs each property as long as
before this profile existed and more.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

# gRPC's fork handlers can crash a child forked with a ``preexec_fn`` (how the dev servers start
# and restart) while grpc.aio threads run in this process; no test forks to use gRPC in the
# child, so they are switched off before anything loads grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

if TYPE_CHECKING:  # imported in the fixtures, so runs that need no server never load them
    import asyncpg

    from cardtable.platform.nats import NatsConnection
    from cardtable.platform.provisioning import NatsNamespace, Provisioned

SERVICE_FIXTURES = frozenset(
    {
        "nats_service",
        "postgres_service",
        "nats_url",
        "database_url",
        "fresh_database_url",
        "pg_pool",
        "nats_namespace",
        "nats_connection",
    }
)
PROVISIONED = pytest.StashKey[list["Provisioned"]]()

#: Property tests: the default profile keeps the whole suite's run short; ``thorough`` is for a
#: long run (``HYPOTHESIS_PROFILE=thorough``), with twice hypothesis' own default. Both judge
#: results, not speed: on a machine shared with another worker (and other people's runs) an
#: example or a draw may take a second, which is no failure of the code under test.
_NOT_TIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", max_examples=30, **_NOT_TIMED)
settings.register_profile("thorough", max_examples=200, **_NOT_TIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """Start the record of which servers this run used."""
    config.stash[PROVISIONED] = []


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say up front where servers will come from, before any is started."""

    def plan(variable: str) -> str:
        value = os.environ.get(variable)
        return f"{variable}={value}" if value else "testcontainers if Docker answers, else embedded"

    return [
        f"cardtable services (started only if a test needs them): nats: {plan('NATS_URL')}; "
        f"postgres: {plan('DATABASE_URL')}"
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a real server, so it can be selected or deselected."""
    for item in items:
        if SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say where this run's servers came from, so a surprising result can be traced."""
    provisioned = terminalreporter.config.stash.get(PROVISIONED, [])
    terminalreporter.section("cardtable services")
    if not provisioned:
        terminalreporter.write_line("none used")
    for service in provisioned:
        terminalreporter.write_line(service.describe())


@pytest.fixture(scope="session")
def docker_available() -> bool:
    """Whether a Docker engine answers; asked once per run, and only if a server is needed."""
    from cardtable.platform.provisioning import docker_answers

    return docker_answers(timeout_seconds=2.0)


def _record(request: pytest.FixtureRequest, service: Provisioned) -> Provisioned:
    request.config.stash[PROVISIONED].append(service)
    request.addfinalizer(service.close)
    return service


@pytest.fixture(scope="session")
def nats_service(request: pytest.FixtureRequest, docker_available: bool) -> Provisioned:
    """The run's NATS and where it came from; ``.server`` is set when the run started it."""
    from cardtable.platform.provisioning import provision_nats

    return _record(request, provision_nats(os.environ, docker_available=lambda: docker_available))


@pytest.fixture(scope="session")
def postgres_service(request: pytest.FixtureRequest, docker_available: bool) -> Provisioned:
    """The run's PostgreSQL and where it came from; ``.server`` is set when the run started it."""
    from cardtable.platform.provisioning import provision_postgres

    return _record(
        request, provision_postgres(os.environ, docker_available=lambda: docker_available)
    )


@pytest.fixture(scope="session")
def nats_url(nats_service: Provisioned) -> str:
    """A NATS JetStream URL shared by the whole run."""
    return nats_service.url


@pytest.fixture(scope="session")
def database_url(postgres_service: Provisioned) -> str:
    """A PostgreSQL superuser URL shared by the whole run; tests want ``fresh_database_url``."""
    return postgres_service.url


@pytest.fixture
async def fresh_database_url(database_url: str) -> AsyncIterator[str]:
    """A database created for this test alone, dropped (connections forced out) afterwards."""
    from cardtable.platform.provisioning import create_database, drop_database

    url = await create_database(database_url)
    yield url
    await drop_database(database_url, url)


@pytest.fixture
async def pg_pool(fresh_database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A small asyncpg pool on this test's own database."""
    from cardtable.platform.postgres import close_pool, create_pool

    pool = await create_pool(fresh_database_url, min_size=1, max_size=4, connect_timeout_seconds=10)
    yield pool
    await close_pool(pool)


@pytest.fixture
async def nats_connection(nats_url: str) -> AsyncIterator[NatsConnection]:
    """A NATS client with its JetStream context, drained after the test."""
    from cardtable.platform.nats import connect_nats

    connection = await connect_nats(nats_url, name="pytest", connect_timeout_seconds=10)
    yield connection
    await connection.close()


@pytest.fixture
async def nats_namespace(nats_connection: NatsConnection) -> AsyncIterator[NatsNamespace]:
    """A prefix no other test uses; the streams created under it are deleted afterwards."""
    from cardtable.platform.provisioning import NatsNamespace

    namespace = NatsNamespace.random()
    yield namespace
    await namespace.delete_streams(nats_connection.jetstream)
