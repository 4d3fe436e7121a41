"""Faults of a three-server NATS cluster: which server to hit, hitting it, and when it is whole.

The events stream's leader is asked of the JetStream API (``STREAM.INFO``'s cluster section);
the meta leader, which places streams and consumers, of a live server's monitoring endpoint
(``/jsz``). Each server runs under its own keeper (``fault_servers``), so that one can be killed
or paused while the others go on.

A cluster must go on without the server hit: the run measures "working again" from the fault
itself, not from the server's return (see ``faults``). Before each fault it waits until the
cluster is whole again (every server healthy, every replica of the log current), so that no
fault lands on a cluster still limping from the last, which a single missing quorum would
turn into an outage no deployment should expect.
"""

from __future__ import annotations

import asyncio
import time

from nats.js import JetStreamContext

from cardtable.platform.log_streams import check_ready, current_followers, group_ready
from cardtable_tools.bench.fault_servers import KeptServer, KeptServerError
from cardtable_tools.servers.dev_servers import monitor_json

#: Replicas of the log and buckets on the fault run's cluster: a quorum survives one loss.
CLUSTER_REPLICAS = 3
#: Longer than a JetStream election timeout (at most 9 s): the paused server's groups elect
#: other leaders meanwhile, and it must step down when it wakes.
PAUSE_SECONDS = 12.0
#: How long the cluster gets to be whole again before a fault is inflicted anyway.
WHOLE_LIMIT_SECONDS = 60.0


class ClusterFaultError(RuntimeError):
    """The server to hit could not be found."""


async def stream_leader(jetstream: JetStreamContext, stream: str) -> str:
    """The name of the server leading ``stream``, from the JetStream API."""
    cluster = (await jetstream.stream_info(stream)).cluster
    if cluster is None or not cluster.leader:
        raise ClusterFaultError(f"{stream} has no leader")
    return cluster.leader


def meta_leader(nodes: list[KeptServer]) -> str:
    """The name of the meta leader, as a live server's ``/jsz`` reports it."""
    for node in nodes:
        if node.cluster is None or not node.is_running:
            continue
        report = monitor_json("127.0.0.1", node.cluster.monitor_port, "jsz")
        leader = ((report or {}).get("meta_cluster") or {}).get("leader")
        if leader:
            return str(leader)
    raise ClusterFaultError("no server names a meta leader")


def named(nodes: list[KeptServer], name: str) -> KeptServer:
    for node in nodes:
        if node.server_name == name:
            return node
    raise ClusterFaultError(f"no server named {name!r} in {[n.server_name for n in nodes]}")


def healthy(node: KeptServer) -> bool:
    """The server's ``/healthz``: in the cluster and caught up with every stream it holds."""
    return (
        node.cluster is not None
        and monitor_json("127.0.0.1", node.cluster.monitor_port, "healthz") is not None
    )


async def wait_healthy(node: KeptServer, limit_seconds: float) -> float | None:
    """Seconds until ``node`` reported healthy, ``None`` if it did not within the limit."""
    began = time.monotonic()
    while time.monotonic() - began < limit_seconds:
        if await asyncio.to_thread(healthy, node):
            return time.monotonic() - began
        await asyncio.sleep(0.1)
    return None


async def wait_whole(
    nodes: list[KeptServer], jetstream: JetStreamContext, streams: list[str]
) -> bool:
    """Wait until every server is healthy and every stream has all replicas current."""
    deadline = time.monotonic() + WHOLE_LIMIT_SECONDS
    while time.monotonic() < deadline:
        try:
            if all([await asyncio.to_thread(healthy, node) for node in nodes]):
                for stream in streams:
                    await check_ready(jetstream, stream, CLUSTER_REPLICAS)
                    await check_consumers_ready(jetstream, stream)
                return True
        # Not ready, or the API itself timed out while a leader is elected: ask again.
        except Exception:
            pass
        await asyncio.sleep(0.25)
    return False


async def check_consumers_ready(jetstream: JetStreamContext, stream: str) -> None:
    """Raise unless every consumer of ``stream`` has a leader and all its replicas current.

    A server back from a crash holds the stream's replica current well before its replicas of
    the consumers: losing another server then would leave a consumer without a quorum.
    """
    for consumer in await jetstream.consumers_info(stream):
        cluster = consumer.cluster
        replicas = consumer.config.num_replicas or CLUSTER_REPLICAS
        if cluster is not None and not group_ready(cluster, replicas):
            raise ClusterFaultError(
                f"consumer {consumer.name}: leader {cluster.leader or 'none'}, "
                f"{current_followers(cluster)} of {replicas - 1} followers current"
            )


async def crash_and_restart(node: KeptServer, down_seconds: float) -> tuple[float, float | None]:
    """SIGKILL ``node``, wait, start it again; (restart time, seconds until healthy)."""
    await node.crash()
    await asyncio.sleep(down_seconds)
    restarted_at, began = time.time(), time.monotonic()
    try:
        await node.start()  # returns once the server reports healthy (dev_servers)
    except KeptServerError:
        return restarted_at, None
    return restarted_at, time.monotonic() - began


async def pause_and_resume(node: KeptServer, paused_seconds: float) -> tuple[float, float | None]:
    """SIGSTOP ``node`` for ``paused_seconds``, SIGCONT; (resume time, seconds until healthy)."""
    node.pause()
    try:
        await asyncio.sleep(paused_seconds)
    finally:
        node.resume()
    resumed_at = time.time()
    return resumed_at, await wait_healthy(node, WHOLE_LIMIT_SECONDS)
