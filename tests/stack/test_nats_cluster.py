"""A three-server NATS cluster as the dev stack and the tests run it, and clients on all three."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import provision_when_ready
from cardtable.platform.nats import connect_nats
from cardtable.platform.settings import NatsSettings, SettingsError, load
from cardtable_tools.servers.dev_servers import DevServers

pytestmark = pytest.mark.timeout(120)


def test_nats_url_may_name_every_server_of_a_cluster() -> None:
    urls = "nats://10.0.0.1:4222, nats://10.0.0.2:4222,nats://10.0.0.3:4222"

    settings = load({"NATS_URL": urls}, NatsSettings.read)

    assert settings.url == "nats://10.0.0.1:4222,nats://10.0.0.2:4222,nats://10.0.0.3:4222"


def test_each_server_of_the_list_is_checked() -> None:
    with pytest.raises(SettingsError, match=re.escape("http://10.0.0.2:4222")):
        load({"NATS_URL": "nats://10.0.0.1:4222,http://10.0.0.2:4222"}, NatsSettings.read)


async def provisioned(url: str, names: LogNames, replicas: int) -> None:
    async with await connect_nats(url, name="pytest-provision") as connection:
        await provision_when_ready(
            connection.jetstream, names, replicas, timeout_seconds=60, retry_seconds=0.5
        )


async def test_the_log_and_buckets_are_r3_and_a_client_outlives_its_server(
    nats_cluster: DevServers,
) -> None:
    names = LogNames.from_prefix("clustered")
    servers = nats_cluster.nats_servers
    assert len(servers) == 3 and nats_cluster.nats_url.count(",") == 2
    await provisioned(nats_cluster.nats_url, names, 3)
    async with await connect_nats(nats_cluster.nats_url, name="pytest") as connection:
        js = connection.jetstream
        for stream in (
            names.stream,
            LogNames.bucket_stream(names.lobby_bucket),
            LogNames.bucket_stream(names.claims_bucket),
        ):
            info = await js.stream_info(stream)
            assert info.config.num_replicas == 3, stream
            assert info.cluster is not None and len(info.cluster.replicas or []) == 2
        assert (await js.publish(names.table_subject("t1"), b"a", stream=names.stream)).seq == 1

        # The server this client is connected to dies: it moves to another and goes on.
        connected = connection.client.connected_url
        assert connected is not None
        victim = next(server for server in servers if server.port == connected.port)
        victim.kill()
        deadline = time.monotonic() + 10
        while True:
            try:
                ack = await js.publish(names.table_subject("t1"), b"b", stream=names.stream)
                break
            except Exception:
                assert time.monotonic() < deadline, "no append within 10 s of losing a server"
                await asyncio.sleep(0.2)
        assert ack.seq == 2 and connection.client.connected_url != connected
