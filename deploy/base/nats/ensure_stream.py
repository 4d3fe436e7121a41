"""Create the event stream and the lobby bucket with the wanted replicas, or converge them to it.

Runs in the cardtable image before the table and scoring services start: as an init container
of their pods on Kubernetes, as the ``nats-setup`` one-shot service in docker-compose::

    NATS_URL=nats://nats:4222 STREAM_REPLICAS=3 python ensure_stream.py

The stream is the table service's own definition (``EventStore.ensure_stream``: file storage,
no deletes or purges, the de-duplication window, one subject per table), so it is exactly the
stream the service would create by itself, only replicated. When the stream or the bucket
already exists with another replica count (a service created it first, or the cluster grew),
its replica count is changed in place: JetStream copies the data to the new peers online.

Settings: ``NATS_URL`` (required), ``EVENT_PREFIX`` (default ``cardtable``),
``STREAM_REPLICAS`` (default 1; 3 on the 3-node cluster), ``STREAM_SETUP_TIMEOUT_SECONDS``
(default 120: how long to wait for a cluster that is still electing its leaders).
Exits 0 when both exist with the wanted replicas and are ready to take appends (a leader, and
every follower current), 2 on a bad setting, 1 when time ran out.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

from nats.js import JetStreamContext, api
from nats.js.errors import BadRequestError, BucketNotFoundError

from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.nats import connect_nats
from cardtable.platform.settings import EnvReader, NatsSettings, SettingsError, load
from cardtable.table_service.main import EventNames
from cardtable.table_service.store import EventStore

RETRY_SECONDS = 2.0


@dataclass(frozen=True)
class StreamSetupSettings:
    nats: NatsSettings
    event_prefix: str
    replicas: int
    timeout_seconds: float

    @classmethod
    def read(cls, env: EnvReader) -> StreamSetupSettings:
        return cls(
            nats=NatsSettings.read(env),
            event_prefix=env.string("EVENT_PREFIX", default="cardtable"),
            # JetStream allows at most 5 replicas; more than the cluster's servers never places.
            replicas=env.integer("STREAM_REPLICAS", default=1, minimum=1, maximum=5),
            timeout_seconds=env.seconds("STREAM_SETUP_TIMEOUT_SECONDS", default=120.0),
        )


async def converge_replicas(jetstream: JetStreamContext, stream: str, replicas: int) -> bool:
    """Set ``stream``'s replica count to ``replicas``; whether it had to change."""
    info = await jetstream.stream_info(stream)
    if info.config.num_replicas == replicas:
        return False
    await jetstream.update_stream(dataclasses.replace(info.config, num_replicas=replicas))
    return True


async def ensure_lobby_bucket(jetstream: JetStreamContext, bucket: str, replicas: int) -> None:
    """The lobby index's bucket, as ``LobbyIndex.start`` creates it (one value per key)."""
    try:
        await jetstream.key_value(bucket)
    except BucketNotFoundError:
        config = api.KeyValueConfig(bucket=bucket, history=1, replicas=replicas)
        # A table service may create it meanwhile; its replicas are converged afterwards.
        with contextlib.suppress(BadRequestError):
            await jetstream.create_key_value(config)


class StreamNotReadyError(Exception):
    """A stream has no leader yet, or not all of its replicas are current."""


async def check_ready(jetstream: JetStreamContext, stream: str, replicas: int) -> None:
    """Raise unless ``stream`` has a leader and ``replicas - 1`` current followers.

    Right after its replicas change, a stream's group elects a leader and the new followers
    catch up; appends made meanwhile time out, so "ready" waits for that to settle.
    """
    cluster = (await jetstream.stream_info(stream)).cluster
    if cluster is None:  # a single server, not a cluster: nothing to elect
        return
    followers = [peer for peer in cluster.replicas or [] if peer.current and not peer.offline]
    if not cluster.leader or len(followers) < replicas - 1:
        raise StreamNotReadyError(
            f"{stream}: leader {cluster.leader or 'none'}, "
            f"{len(followers)} of {replicas - 1} followers current"
        )


async def ensure(jetstream: JetStreamContext, names: EventNames, replicas: int) -> list[str]:
    """Create or converge the stream and the bucket; the names of those whose replicas changed.

    Raises (the caller retries until its deadline) until both are ready to take appends.
    """
    await EventStore(jetstream, names.stream, names.prefix).ensure_stream(replicas=replicas)
    await ensure_lobby_bucket(jetstream, names.lobby_bucket, replicas)
    changed = []
    streams = (names.stream, f"KV_{names.lobby_bucket}")
    for stream in streams:
        if await converge_replicas(jetstream, stream, replicas):
            changed.append(stream)
    for stream in streams:
        await check_ready(jetstream, stream, replicas)
    return changed


async def run(env: Mapping[str, str]) -> int:
    settings = load(env, StreamSetupSettings.read)
    configure_logging("INFO", service="stream-setup")
    log = get_logger("cardtable.stream_setup")
    names = EventNames(settings.event_prefix)
    deadline = time.monotonic() + settings.timeout_seconds
    connection = await connect_nats(
        settings.nats.url,
        name="stream-setup",
        connect_timeout_seconds=settings.timeout_seconds,
        logger=log,
    )
    try:
        while True:
            try:
                changed = await ensure(connection.jetstream, names, settings.replicas)
                break
            # A cluster still forming answers "no leader" or "insufficient resources", and a
            # stream whose replicas just changed is not ready at once: wait.
            except Exception as error:
                problem = f"{type(error).__name__}: {error}"
                if time.monotonic() > deadline:
                    log.error("stream setup gave up", extra={"error": problem})
                    return 1
                log.warning("JetStream not ready yet", extra={"error": problem})
                await asyncio.sleep(RETRY_SECONDS)
        log.info(
            "stream ready",
            extra={
                "stream": names.stream,
                "bucket": names.lobby_bucket,
                "replicas": settings.replicas,
                "replicas_changed": changed,
            },
        )
        return 0
    finally:
        await connection.close()


def main() -> int:
    try:
        return asyncio.run(run(os.environ))
    except SettingsError as error:
        print(f"stream setup: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
