"""Real NATS JetStream and PostgreSQL for the tests that ask for them, and nothing for the rest.

Session fixtures (started at most once, and only when a test requests them):

* ``nats_url``: a NATS server with JetStream;
* ``database_url``: a PostgreSQL superuser URL (the ``postgres`` database);
* ``nats_service`` / ``postgres_service``: the same servers as ``Provisioned`` records, whose
  ``.server`` lets a fault test stop, kill and restart a server this run started (it is
  ``None`` for a server from the environment or a container). A fault test that must not
  disturb the others can instead start its own with ``dev_servers()``.

Each comes from ``NATS_URL``/``DATABASE_URL`` when set, else a testcontainer when Docker
answers, else the embedded wheel servers (see ``cardtable_tools.servers.provisioning``). A test that
asks for one and cannot get it errors; it is never skipped. The source used is printed in the
terminal summary.

Function fixtures keep tests apart on those shared servers:

* ``fresh_database_url``: a newly created, empty database, dropped afterwards;
* ``pg_pool``: an asyncpg pool on that database;
* ``nats_namespace``: a unique stream/subject prefix, whose streams are deleted afterwards;
* ``nats_connection``: a connected client and JetStream context, drained afterwards;
* ``nats_cluster``: three JetStream servers of the ``nats-server`` wheel clustered on loopback
  as in production (``dev_servers(nats_cluster=3)``), started for this test alone so that it
  may kill or pause any of them; ``.nats_url`` names all three.

Tests using any of these are marked ``services`` automatically (``-m "not services"`` skips
them all); a test that starts servers or service processes of its own is marked by hand.

``make test`` runs on two pytest-xdist workers, each with its own servers (the fixtures above are
per worker; namespaces and databases are random, so nothing is shared between workers anyway).
Two markers say how a test may share the machine:

* ``alone``: timing-sensitive (a deadline it must beat, a recovery it times): while it runs, the
  other workers start no test and wait for the ones they have running to end (see
  ``_taking_turns``). Without xdist every test runs alone anyway.
* ``SHARED_STACKS`` below: tests that share a module- or session-scoped stack run on one worker,
  so that it is started once (xdist's own ``xdist_group`` marker does nothing under pytest 9,
  whose node ids ignore the group suffix xdist gives them).

Hypothesis runs the ``default`` profile registered here (fewer examples, the property tests'
run time in the tens of seconds); ``HYPOTHESIS_PROFILE=thorough`` runs each property as long as
before this profile existed and more.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

# gRPC's fork handlers can crash a child forked with a ``preexec_fn`` (how the dev servers start
# and restart) while grpc.aio threads run in this process; no test forks to use gRPC in the
# child, so they are switched off before anything loads grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

if TYPE_CHECKING:  # imported in the fixtures, so runs that need no server never load them
    import asyncpg

    from cardtable.platform.nats import NatsConnection
    from cardtable_tools.servers.dev_servers import DevServers
    from cardtable_tools.servers.provisioning import NatsNamespace, Provisioned

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
        "nats_cluster",
    }
)
PROVISIONED = pytest.StashKey[list["Provisioned"]]()
#: Set by the xdist controller for its workers: the directory of the locks of ``_taking_turns``.
TURN_LOCKS = "CARDTABLE_TEST_TURN_LOCKS"
#: Under xdist, where each worker's servers came from (its ``workeroutput``, then the summary).
WORKER_SERVICES = "cardtable_services"
WORKER_LINES = pytest.StashKey[list[str]]()

#: Tests (by node id prefix) that share an expensive module- or session-scoped fixture, and the
#: group each runs in: under ``--dist loadgroup`` a group is one unit of work, on one worker.
SHARED_STACKS = {
    "tests/examples/test_python_example.py": "example-stack",  # tests/examples/conftest.py
    "tests/examples/test_typescript_client.py": "example-stack",
    "tests/stack/test_run_demo.py": "demo-stack",  # tests/stack/conftest.py
    "tests/stack/test_readme_examples.py::test_the_commands_": "demo-stack",
    "tests/stack/test_readme_examples.py::test_the_readme_examples_": "demo-stack",
    "tests/stack/test_readme_examples.py::test_buf_curl_": "demo-stack",
    "tests/stack/test_dev_servers.py": "dev-servers",
    "tests/replay/test_html_browser.py": "chromium",
    "tests/deploy/test_dockerfile.py": "wheel",
}

#: Property tests: the default profile keeps the whole suite's run short; ``thorough`` is for a
#: long run (``HYPOTHESIS_PROFILE=thorough``), with twice hypothesis' own default. Both judge
#: results, not speed: on a machine shared with another worker (and other people's runs) an
#: example or a draw may take a second, which is no failure of the code under test.
_NOT_TIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", max_examples=30, **_NOT_TIMED)
settings.register_profile("thorough", max_examples=200, **_NOT_TIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """Start the record of which servers this run used; as the xdist controller, make the
    directory of the workers' turn locks (removed in ``pytest_unconfigure``)."""
    config.stash[PROVISIONED] = []
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        os.environ[TURN_LOCKS] = tempfile.mkdtemp(prefix="cardtable-turns-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and TURN_LOCKS in os.environ:
        shutil.rmtree(os.environ.pop(TURN_LOCKS), ignore_errors=True)


@contextmanager
def _taking_turns(directory: Path, *, alone: bool) -> Iterator[None]:
    """Hold the run lock shared (any test) or exclusive (an ``alone`` test) across workers.

    The turnstile makes it fair: an ``alone`` test holds it while it waits for and holds the run
    lock, so no new test starts on another worker meanwhile, and the tests running there end
    and let it in. Any other test passes the turnstile only to take the run lock shared."""
    with (directory / "turnstile").open("a") as turnstile, (directory / "run").open("a") as run:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(run, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(run, fcntl.LOCK_UN)  # and the turnstile, if held, when it is closed


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the groups of ``SHARED_STACKS``; every other test is a unit of
    its own (handed to whichever worker is free, in collection order: see
    ``pytest_collection_modifyitems``), the groups first."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedStackScheduling(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            scope: str = super()._split_scope(nodeid)  # xdist's "@group", if it ever works
            if scope != nodeid:
                return scope
            return next(
                (group for prefix, group in SHARED_STACKS.items() if nodeid.startswith(prefix)),
                nodeid,
            )

    return SharedStackScheduling(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Under xdist, each test takes its turn (see ``_taking_turns``): setup, call and teardown."""
    directory = os.environ.get(TURN_LOCKS)
    if directory is None:
        return (yield)
    with _taking_turns(Path(directory), alone=item.get_closest_marker("alone") is not None):
        return (yield)


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
    """Mark every test that uses a real server, so it can be selected or deselected; and put
    the modules with such tests first (each module's tests kept together and in order), so that
    under xdist the long ones are handed out early and the many short in-process tests even
    out the workers at the end."""
    with_servers: set[str] = set()
    for item in items:
        if SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)
        if item.get_closest_marker("services") is not None:
            with_servers.add(item.nodeid.split("::")[0])
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in with_servers)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """As an xdist worker, hand the controller the lines that say where its servers came from."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_SERVICES] = [
            service.describe() for service in session.config.stash.get(PROVISIONED, [])
        ]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """As the xdist controller, keep each worker's lines for the terminal summary."""
    lines = getattr(node, "workeroutput", {}).get(WORKER_SERVICES, [])
    node.config.stash.setdefault(WORKER_LINES, []).extend(
        f"{node.gateway.id}: {line}" for line in lines
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say where this run's servers came from, so a surprising result can be traced."""
    provisioned = terminalreporter.config.stash.get(PROVISIONED, [])
    lines = [service.describe() for service in provisioned]
    lines += terminalreporter.config.stash.get(WORKER_LINES, [])
    terminalreporter.section("cardtable services")
    if not lines:
        terminalreporter.write_line("none used")
    for line in lines:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def docker_available() -> bool:
    """Whether a Docker engine answers; asked once per run, and only if a server is needed."""
    from cardtable_tools.servers.provisioning import docker_answers

    return docker_answers(timeout_seconds=2.0)


def _record(request: pytest.FixtureRequest, service: Provisioned) -> Provisioned:
    request.config.stash[PROVISIONED].append(service)
    request.addfinalizer(service.close)
    return service


@pytest.fixture(scope="session")
def nats_service(request: pytest.FixtureRequest, docker_available: bool) -> Provisioned:
    """The run's NATS and where it came from; ``.server`` is set when the run started it."""
    from cardtable_tools.servers.provisioning import provision_nats

    return _record(request, provision_nats(os.environ, docker_available=lambda: docker_available))


@pytest.fixture(scope="session")
def postgres_service(request: pytest.FixtureRequest, docker_available: bool) -> Provisioned:
    """The run's PostgreSQL and where it came from; ``.server`` is set when the run started it."""
    from cardtable_tools.servers.provisioning import provision_postgres

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
    from cardtable_tools.servers.provisioning import create_database, drop_database

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
    from cardtable_tools.servers.provisioning import NatsNamespace

    namespace = NatsNamespace.random()
    yield namespace
    await namespace.delete_streams(nats_connection.jetstream)


@pytest.fixture
def nats_cluster() -> Iterator[DevServers]:
    """Three clustered JetStream servers for this test alone, stopped afterwards."""
    from cardtable_tools.servers.dev_servers import dev_servers

    with dev_servers(postgres=False, nats_cluster=3) as servers:
        yield servers
