"""Where the test servers come from, and how tests are kept apart on them."""

from __future__ import annotations

import doctest
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import asyncpg
import pytest

from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable_tools.servers import provisioning
from cardtable_tools.servers.provisioning import (
    CONTAINER,
    EMBEDDED,
    ENV,
    NatsNamespace,
    Provisioned,
    ProvisioningError,
    create_database,
    docker_answers,
    drop_database,
    nats_answers,
    postgres_answers,
    provision_nats,
    provision_postgres,
)

LOCAL_NATS = "nats://127.0.0.1:4222"
LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
CLOSED_PORT_NATS = "nats://127.0.0.1:9"
CLOSED_PORT_POSTGRES = "postgresql://postgres@127.0.0.1:9/postgres"


def no_docker() -> bool:
    return False


@pytest.fixture
def provisioned() -> Iterator[list[Provisioned]]:
    """Servers a test provisions itself, released at its end."""
    started: list[Provisioned] = []
    yield started
    for service in started:
        service.close()


async def exercise_jetstream(url: str) -> None:
    namespace = NatsNamespace.random()
    async with await connect_nats(url, name="provisioning-test") as nats:
        stream = namespace.stream("EVENTS")
        await nats.jetstream.add_stream(name=stream, subjects=[namespace.subject(">")])
        ack = await nats.jetstream.publish(namespace.subject("table", "1"), b"SeatTaken")
        assert (ack.stream, ack.seq) == (stream, 1)
        assert await namespace.delete_streams(nats.jetstream) == [stream]


async def exercise_postgres(admin_url: str) -> None:
    url = await create_database(admin_url)
    connection = await asyncpg.connect(url)
    try:
        assert await connection.fetchval("select 1") == 1
    finally:
        await connection.close()
    await drop_database(admin_url, url)


@pytest.mark.skipif(not nats_answers(LOCAL_NATS), reason=f"no NATS JetStream at {LOCAL_NATS}")
async def test_nats_url_from_the_environment_is_used_as_is(
    provisioned: list[Provisioned],
) -> None:
    service = provision_nats({"NATS_URL": LOCAL_NATS}, docker_available=no_docker)
    provisioned.append(service)

    assert (service.source, service.url, service.detail) == (ENV, LOCAL_NATS, "NATS_URL")
    await exercise_jetstream(service.url)


@pytest.mark.skipif(
    not postgres_answers(LOCAL_POSTGRES), reason=f"no PostgreSQL at {LOCAL_POSTGRES}"
)
async def test_database_url_from_the_environment_is_used_as_is(
    provisioned: list[Provisioned],
) -> None:
    service = provision_postgres({"DATABASE_URL": LOCAL_POSTGRES}, docker_available=no_docker)
    provisioned.append(service)

    assert (service.source, service.url) == (ENV, LOCAL_POSTGRES)
    await exercise_postgres(service.url)


def test_an_unreachable_server_from_the_environment_fails_loudly() -> None:
    with pytest.raises(ProvisioningError, match=r"NATS_URL=nats://127\.0\.0\.1:9 is set but no"):
        provision_nats({"NATS_URL": CLOSED_PORT_NATS}, docker_available=no_docker)
    with pytest.raises(ProvisioningError, match="unset DATABASE_URL"):
        provision_postgres({"DATABASE_URL": CLOSED_PORT_POSTGRES}, docker_available=no_docker)


@pytest.mark.services
async def test_without_environment_or_docker_the_embedded_servers_are_used(
    provisioned: list[Provisioned],
) -> None:
    nats = provision_nats({}, docker_available=no_docker)
    postgres = provision_postgres({}, docker_available=no_docker)
    provisioned.extend([nats, postgres])

    assert (nats.source, postgres.source) == (EMBEDDED, EMBEDDED)
    await exercise_jetstream(nats.url)
    await exercise_postgres(postgres.url)


@pytest.mark.services
@pytest.mark.skipif(not docker_answers(), reason="no Docker engine answers a ping")
async def test_with_docker_the_testcontainers_are_used(provisioned: list[Provisioned]) -> None:
    nats = provision_nats({}, docker_available=lambda: True)
    postgres = provision_postgres({}, docker_available=lambda: True)
    provisioned.extend([nats, postgres])

    assert (nats.source, postgres.source) == (CONTAINER, CONTAINER)
    await exercise_jetstream(nats.url)
    await exercise_postgres(postgres.url)


def test_asking_docker_costs_next_to_nothing_when_there_is_none() -> None:
    began = time.monotonic()
    docker_answers(timeout_seconds=2.0)
    assert time.monotonic() - began < 2.5


def test_namespaces_are_unique_and_valid_names() -> None:
    names = {NatsNamespace.random().prefix for _ in range(1000)}

    assert len(names) == 1000
    assert all(name[0].isalpha() and name.isalnum() for name in names)


# The fixtures from tests/conftest.py, whichever source they resolved to.


async def test_fresh_databases_are_empty_and_distinct(
    fresh_database_url: str, database_url: str, pg_pool: asyncpg.Pool
) -> None:
    own = urlsplit(fresh_database_url).path.lstrip("/")

    assert own != urlsplit(database_url).path.lstrip("/")
    assert await pg_pool.fetchval("select current_database()") == own
    assert await pg_pool.fetchval("select count(*) from pg_tables where schemaname='public'") == 0
    await pg_pool.execute("create table seen (id int)")


async def test_a_fresh_database_is_dropped_after_its_test(database_url: str) -> None:
    """``fresh_database_url`` without pytest: what it creates, it removes."""
    url = await create_database(database_url, prefix="dropme")
    holder = await asyncpg.connect(url)  # a forgotten connection must not block the drop
    await drop_database(database_url, url)

    admin = await asyncpg.connect(database_url)
    try:
        remaining = await admin.fetchval(
            "select count(*) from pg_database where datname = $1", urlsplit(url).path[1:]
        )
    finally:
        await admin.close()
    assert remaining == 0
    assert holder.is_closed() or await _is_gone(holder)


async def _is_gone(connection: asyncpg.Connection) -> bool:
    try:
        await connection.fetchval("select 1")
    except (asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError):
        return True
    return False


async def test_a_namespace_keeps_streams_apart(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    other = NatsNamespace.random()
    js = nats_connection.jetstream
    for space in (nats_namespace, other):
        await js.add_stream(name=space.stream("EVENTS"), subjects=[space.subject("table", ">")])

    await js.publish(nats_namespace.subject("table", "7"), b"CardPlayed")

    assert (await js.stream_info(nats_namespace.stream("EVENTS"))).state.messages == 1
    assert (await js.stream_info(other.stream("EVENTS"))).state.messages == 0
    await other.delete_streams(js)


def test_docstring_examples_pass() -> None:
    results = doctest.testmod(provisioning, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
