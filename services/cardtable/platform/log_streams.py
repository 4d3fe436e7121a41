"""The event log's streams and buckets: their definitions, and provisioning them.

Under NATS authorization no service may create or change a stream (platform/nats_access.py):
the provisioner does it once per deployment, before the services start, with
``cardtable-provision`` (``make run`` and the tests do the same). A service finding its stream
missing says so and names that command; on a server without authorization (a developer's own)
the services still create what is missing themselves, with these same definitions.

The events stream: file storage, no deletes or purges (the log is the truth), a de-duplication
window for command ids, one subject per table, and every stored batch republished so that live
followers see only what was stored. On a cluster each stream and bucket has ``replicas`` copies;
an existing one is converged to that count in place.

Settings of the command: ``NATS_URL``, ``NATS_USER``/``NATS_PASSWORD`` (the provisioner),
``EVENT_PREFIX`` (default ``cardtable``), ``STREAM_REPLICAS`` (default 1),
``BOT_CLAIM_TTL_SECONDS`` (default 15: the claims bucket's max age) and
``STREAM_SETUP_TIMEOUT_SECONDS`` (default 120: how long to wait for a cluster still electing
its leaders). Exits 0 when everything exists and is ready, 2 on a bad setting, 1 when time ran
out.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import nats.errors
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BadRequestError, BucketNotFoundError, NotFoundError

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import SIGNED_FROM_METADATA, signed_from_sequence
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.nats import connect_nats_from_settings
from cardtable.platform.nats_access import PROVISIONER
from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    SettingsError,
    load,
    read_event_prefix,
)

DUPLICATE_WINDOW_SECONDS = 120
DEFAULT_CLAIM_TTL_SECONDS = 15.0
RETRY_SECONDS = 2.0
#: "stream configuration update can not change RePublish" (NATS before 2.10).
STREAM_CONFIG_INVALID = 10052

_log = get_logger(__name__)


def republish(names: LogNames) -> api.RePublish:
    """Every stored batch, again under ``{prefix}.stored.``.

    NATS 2.9 accepts only a full-wildcard source here, so the stored subject keeps the
    original one whole after the prefix.
    """
    return api.RePublish(src=">", dest=f"{names.stored_root}.>")


def events_stream_config(names: LogNames, replicas: int = 1) -> api.StreamConfig:
    """The events stream, as every deployment has it."""
    return api.StreamConfig(
        name=names.stream,
        subjects=[names.tables_subject],
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        deny_delete=True,
        deny_purge=True,
        duplicate_window=DUPLICATE_WINDOW_SECONDS,
        num_replicas=replicas,
        allow_direct=True,
        republish=republish(names),
    )


def lobby_bucket_config(names: LogNames, replicas: int = 1) -> api.KeyValueConfig:
    """The table service's lobby index: one value per table."""
    return api.KeyValueConfig(bucket=names.lobby_bucket, history=1, replicas=replicas)


def claims_bucket_config(
    names: LogNames, ttl_seconds: float = DEFAULT_CLAIM_TTL_SECONDS, replicas: int = 1
) -> api.KeyValueConfig:
    """The bot service's claims: a claim not renewed within the TTL expires."""
    return api.KeyValueConfig(
        bucket=names.claims_bucket,
        history=1,
        ttl=ttl_seconds,
        storage=api.StorageType.FILE,
        replicas=replicas,
        description="cardtable bot service: which replica plays which seat",
    )


@dataclass(frozen=True)
class EventsStream:
    """What the services need to know of the events stream once it is there."""

    #: Whether stored batches are republished (NATS 2.10 and later; see the table store).
    republishes: bool
    #: The first stream sequence whose batches must be signed (platform/log_signing.py).
    signed_from_sequence: int


async def ensure_events_stream(
    jetstream: JetStreamContext, names: LogNames, replicas: int = 1
) -> EventsStream:
    """Create the events stream if missing, make it republish and record where signing began.

    A stream made before republishing existed is given it; NATS before 2.10 refuses that
    change, and followers then read the log on every change instead (see the table store).
    A stream that already holds batches written before signing is marked with the first
    sequence that must be signed, so those stay readable as "written before signing" and no
    later batch can pass as one of them.
    """
    config = events_stream_config(names, replicas)
    config.metadata = {SIGNED_FROM_METADATA: "1"}
    try:
        info = await jetstream.stream_info(names.stream)
    except NotFoundError:
        with contextlib.suppress(BadRequestError):  # another process created it first
            await jetstream.add_stream(config)
        info = await jetstream.stream_info(names.stream)
    wanted, have = republish(names), info.config.republish
    republishes = have is not None and (have.src, have.dest) == (wanted.src, wanted.dest)
    metadata = dict(info.config.metadata or {})
    marked = SIGNED_FROM_METADATA in metadata
    if republishes and marked:
        return EventsStream(True, signed_from_sequence(metadata))
    if not marked:
        metadata[SIGNED_FROM_METADATA] = str(info.state.last_seq + 1)
        info.config.metadata = metadata
    info.config.republish = wanted
    try:
        await jetstream.update_stream(info.config)
    except (TimeoutError, nats.errors.TimeoutError):
        # Not ours to change (NATS authorization: the provisioner's job): use it as it is.
        _log.warning(
            "the event stream is not provisioned as this version wants it and this NATS user "
            "may not change it: run cardtable-provision",
            extra={"stream": names.stream},
        )
        return EventsStream(republishes, signed_from_sequence(info.config.metadata))
    except APIError as error:
        if error.err_code != STREAM_CONFIG_INVALID:
            raise
        _log.warning(
            "the event stream cannot republish on this NATS server (before 2.10): live "
            "followers read the log on every change; upgrade NATS to lift this",
            extra={"stream": names.stream, "error": str(error.description)},
        )
        return EventsStream(False, signed_from_sequence(info.config.metadata))
    info = await jetstream.stream_info(names.stream)
    return EventsStream(True, signed_from_sequence(info.config.metadata))


async def ensure_bucket(jetstream: JetStreamContext, config: api.KeyValueConfig) -> None:
    """Create a key-value bucket if missing."""
    assert config.bucket is not None
    try:
        await jetstream.key_value(config.bucket)
    except BucketNotFoundError:
        with contextlib.suppress(BadRequestError):  # created meanwhile: converged below
            await jetstream.create_key_value(config)


async def converge_replicas(jetstream: JetStreamContext, stream: str, replicas: int) -> bool:
    """Set ``stream``'s replica count to ``replicas``; whether it had to change."""
    info = await jetstream.stream_info(stream)
    if info.config.num_replicas == replicas:
        return False
    await jetstream.update_stream(dataclasses.replace(info.config, num_replicas=replicas))
    return True


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
    if not group_ready(cluster, replicas):
        raise StreamNotReadyError(
            f"{stream}: leader {cluster.leader or 'none'}, "
            f"{current_followers(cluster)} of {replicas - 1} followers current"
        )


def current_followers(cluster: api.ClusterInfo) -> int:
    """How many of a raft group's followers are online and caught up with its leader."""
    return sum(1 for peer in cluster.replicas or [] if peer.current and not peer.offline)


def group_ready(cluster: api.ClusterInfo, replicas: int) -> bool:
    """Whether a stream's or consumer's group has a leader and all ``replicas - 1`` followers
    current, so that it keeps a quorum if one more server is lost."""
    return bool(cluster.leader) and current_followers(cluster) >= replicas - 1


async def provision(
    jetstream: JetStreamContext,
    names: LogNames,
    replicas: int = 1,
    claim_ttl_seconds: float = DEFAULT_CLAIM_TTL_SECONDS,
) -> list[str]:
    """Create or converge the stream and both buckets; the names whose replicas changed.

    Raises (the caller retries until its deadline) until all are ready to take writes.
    """
    await ensure_events_stream(jetstream, names, replicas)
    await ensure_bucket(jetstream, lobby_bucket_config(names, replicas))
    await ensure_bucket(jetstream, claims_bucket_config(names, claim_ttl_seconds, replicas))
    streams = (
        names.stream,
        LogNames.bucket_stream(names.lobby_bucket),
        LogNames.bucket_stream(names.claims_bucket),
    )
    changed = [stream for stream in streams if await converge_replicas(jetstream, stream, replicas)]
    for stream in streams:
        await check_ready(jetstream, stream, replicas)
    return changed


async def provision_when_ready(
    jetstream: JetStreamContext,
    names: LogNames,
    replicas: int = 1,
    claim_ttl_seconds: float = DEFAULT_CLAIM_TTL_SECONDS,
    *,
    timeout_seconds: float,
    retry_seconds: float = RETRY_SECONDS,
    on_retry: Callable[[str], None] = lambda _: None,
) -> list[str]:
    """``provision`` again and again until it succeeds; its last error after the deadline.

    A cluster still forming answers "no leader" or "insufficient resources", and a stream whose
    replicas just changed is not ready at once: both pass with time. ``on_retry`` hears why.
    """
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            return await provision(jetstream, names, replicas, claim_ttl_seconds)
        except Exception as error:
            if time.monotonic() > deadline:
                raise
            on_retry(f"{type(error).__name__}: {error}")
            await asyncio.sleep(retry_seconds)


@dataclass(frozen=True)
class ProvisionSettings:
    nats: NatsSettings
    names: LogNames
    replicas: int
    claim_ttl_seconds: float
    timeout_seconds: float

    @classmethod
    def read(cls, env: EnvReader) -> ProvisionSettings:
        return cls(
            nats=NatsSettings.read(env),
            names=LogNames(read_event_prefix(env)),
            # JetStream allows at most 5 replicas; more than the cluster's servers never places.
            replicas=env.integer("STREAM_REPLICAS", default=1, minimum=1, maximum=5),
            claim_ttl_seconds=env.seconds(
                "BOT_CLAIM_TTL_SECONDS", default=DEFAULT_CLAIM_TTL_SECONDS
            ),
            timeout_seconds=env.seconds("STREAM_SETUP_TIMEOUT_SECONDS", default=120.0),
        )


async def run(env: Mapping[str, str]) -> int:
    """Provision until ready or out of time (module docstring)."""
    settings = load(env, ProvisionSettings.read)
    configure_logging("INFO", service="provision")
    log = get_logger("cardtable.provision")
    names = settings.names
    connection = await connect_nats_from_settings(
        settings.nats, name="provision", inbox_prefix=names.inbox_prefix(PROVISIONER), logger=log
    )
    try:
        try:
            changed = await provision_when_ready(
                connection.jetstream,
                names,
                settings.replicas,
                settings.claim_ttl_seconds,
                timeout_seconds=settings.timeout_seconds,
                on_retry=lambda problem: log.warning(
                    "JetStream not ready yet", extra={"error": problem}
                ),
            )
        except Exception as error:
            log.error("provisioning gave up", extra={"error": f"{type(error).__name__}: {error}"})
            return 1
        log.info(
            "event log provisioned",
            extra={
                "stream": names.stream,
                "buckets": [names.lobby_bucket, names.claims_bucket],
                "replicas": settings.replicas,
                "replicas_changed": changed,
            },
        )
        return 0
    finally:
        await connection.close()


def main() -> int:
    """``cardtable-provision``: the stream and buckets of ``EVENT_PREFIX``, ready for use."""
    try:
        return asyncio.run(run(os.environ))
    except SettingsError as error:
        print(f"provision: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
