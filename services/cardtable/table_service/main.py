"""Composition root of the table service: settings, connections, application, timers, server.

Run it with ``cardtable-table`` (or ``python -m cardtable.table_service.main``). Settings come
from the environment and are checked at start-up: ``NATS_URL``, ``RULES_ADDRESS``,
``TOKEN_SIGNING_KEY`` (at least 32 characters), optionally ``TOKEN_PREVIOUS_KEYS`` (comma-
separated keys still accepted after a rotation), ``EVENT_PREFIX`` (default
``cardtable``: stream ``CARDTABLE_EVENTS``, subjects ``cardtable.table.<id>``), ``GRPC_PORT``,
``METRICS_PORT``, ``LOG_LEVEL``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from cardtable.eventlog.store import EventStore
from cardtable.platform.entrypoint import run_service
from cardtable.platform.grpc_server import Service, serve
from cardtable.platform.log_names import LogNames
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.metrics import new_registry
from cardtable.platform.nats import connect_nats_from_settings
from cardtable.platform.nats_access import TABLE
from cardtable.platform.pipeline_client import DEFAULT_LINGER_SECONDS
from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    RulesClientSettings,
    ServerSettings,
    load,
    read_event_prefix,
)
from cardtable.platform.tokens import DEFAULT_MAX_LIFETIME_SECONDS, TokenCodec
from cardtable.platform.tracing import outgoing_headers
from cardtable.table_service.application import TableApplication
from cardtable.table_service.commands import Environment
from cardtable.table_service.limits import (
    BOT_FALLBACK_MS,
    DEFAULT_LIMITS,
    MAX_TURN_TIMER_MS,
    MIN_TURN_TIMER_MS,
    TableLimits,
)
from cardtable.table_service.lobby_index import DEFAULT_FINISHED_RETENTION_SECONDS, LobbyIndex
from cardtable.table_service.log_security import LogSecurity, read_log_security
from cardtable.table_service.matchmaking import Lobby
from cardtable.table_service.metrics import TableMetrics
from cardtable.table_service.quotas import DEFAULT_QUOTAS, QuotaSettings, read_quotas
from cardtable.table_service.rated import RATED_MIN_TURN_TIMER_MS
from cardtable.table_service.rules_pipeline import PipelinedRules
from cardtable.table_service.rules_port import RulesPort
from cardtable.table_service.servicer import TableServicer
from cardtable.table_service.table_changes import TableChanges
from cardtable.table_service.timers import TableTimers
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name


@dataclass(frozen=True)
class TableServiceSettings:
    server: ServerSettings
    nats: NatsSettings
    rules: RulesClientSettings
    token_signing_key: str
    #: Keys still accepted for verification while tokens signed before a rotation expire.
    previous_token_keys: tuple[str, ...]
    #: The longest a player token may live from its issue (auth.py).
    token_max_lifetime_seconds: float
    event_prefix: str
    #: The keys that sign, seal, verify and open the log (log_security.py).
    log_security: LogSecurity
    #: Bounds on tables' settings (limits.py), and those of rated games (rated.py).
    limits: TableLimits
    #: Per-player quotas and rate limits (quotas.py).
    quotas: QuotaSettings
    #: How long a finished table stays in the lobby (0: for ever; see lobby_index).
    lobby_finished_retention_seconds: float = DEFAULT_FINISHED_RETENTION_SECONDS
    #: How long pipelined calls to the rules service wait for others to share their message
    #: (platform/pipeline_client.py); 0: never.
    pipeline_linger_seconds: float = DEFAULT_LINGER_SECONDS

    @classmethod
    def read(cls, env: EnvReader) -> TableServiceSettings:
        key = env.string("TOKEN_SIGNING_KEY", example="a random string of 32+ characters")
        if key and len(key) < 32:
            env.problem("TOKEN_SIGNING_KEY must be at least 32 characters")
        return cls(
            server=ServerSettings.read(env),
            nats=NatsSettings.read(env),
            rules=RulesClientSettings.read(env),
            token_signing_key=key,
            previous_token_keys=tuple(
                part.strip()
                for part in env.string("TOKEN_PREVIOUS_KEYS", default="").split(",")
                if part.strip()
            ),
            token_max_lifetime_seconds=env.seconds(
                "TOKEN_MAX_LIFETIME_SECONDS", default=DEFAULT_MAX_LIFETIME_SECONDS
            ),
            event_prefix=read_event_prefix(env),
            log_security=read_log_security(env),
            quotas=read_quotas(env),
            limits=TableLimits(
                min_turn_timer_ms=env.integer(
                    "MIN_TURN_TIMER_MS",
                    default=MIN_TURN_TIMER_MS,
                    minimum=1,
                    maximum=MAX_TURN_TIMER_MS,
                ),
                bot_fallback_ms=env.integer(
                    "BOT_FALLBACK_MS", default=BOT_FALLBACK_MS, minimum=1, maximum=MAX_TURN_TIMER_MS
                ),
                rated_min_turn_timer_ms=env.integer(
                    "RATED_MIN_TURN_TIMER_MS",
                    default=RATED_MIN_TURN_TIMER_MS,
                    minimum=1,
                    maximum=MAX_TURN_TIMER_MS,
                ),
            ),
            lobby_finished_retention_seconds=env.seconds(
                "LOBBY_FINISHED_RETENTION_SECONDS", default=DEFAULT_FINISHED_RETENTION_SECONDS
            ),
            pipeline_linger_seconds=env.integer(
                "PIPELINE_LINGER_MS",
                default=round(DEFAULT_LINGER_SECONDS * 1000),
                minimum=0,
                maximum=100,
            )
            / 1000,
        )


@dataclass
class TableServiceParts:
    """Everything the service is made of, for ``main`` and for in-process tests."""

    app: TableApplication
    servicer: TableServicer
    timers: TableTimers
    index: LobbyIndex

    def service(self) -> Service:
        return Service(
            name=SERVICE_NAME,
            servicer=self.servicer,
            add_to_server=table_pb2_grpc.add_TableServiceServicer_to_server,
        )


@asynccontextmanager
async def table_service_parts(
    nats_client: NatsClient,
    jetstream: JetStreamContext,
    rules: RulesPort,
    tokens: TokenCodec,
    names: LogNames,
    environment: Environment | None = None,
    registry: CollectorRegistry | None = None,
    lobby_finished_retention_seconds: float = DEFAULT_FINISHED_RETENTION_SECONDS,
    security: LogSecurity | None = None,
    limits: TableLimits = DEFAULT_LIMITS,
    quotas: QuotaSettings = DEFAULT_QUOTAS,
) -> AsyncIterator[TableServiceParts]:
    """Build and start the table service's parts on an open NATS connection."""
    environment = environment or Environment(now=time.time)
    store = EventStore(jetstream, names)
    await store.ensure_stream()
    index = LobbyIndex(
        jetstream,
        names.lobby_bucket,
        finished_retention_seconds=lobby_finished_retention_seconds,
        now=environment.now,
    )
    await index.start()

    async def publish_bot_request(table_id: str, request: events_pb2.BotSeatRequested) -> None:
        payload = events_pb2.Event(bot_seat_requested=request).SerializeToString()
        headers = {"Table-Id": table_id, **outgoing_headers()}
        await nats_client.publish(names.bot_requests, payload, headers=headers)

    app = TableApplication(
        store,
        rules,
        environment,
        index,
        publish_bot_request,
        security=security,
        signed_from_sequence=store.signed_from_sequence,
        limits=limits,
    )
    timers = TableTimers(app, environment.now)
    timers.start()
    try:
        metrics = TableMetrics(registry if registry is not None else CollectorRegistry())
        app.integrity_listeners.append(metrics.log_integrity_failed)
        app.security.signing.listeners.append(metrics.log_signed)
        app.fallback_listeners.append(lambda table_id, seat: metrics.bot_fallback_moves.inc())
        lobby = Lobby(app, quotas, metrics.quota_checked)
        changes = TableChanges(nats_client, store)
        app.appended_listeners.append(changes.appended)
        servicer = TableServicer(app, tokens, lobby, changes, metrics, quotas)
        yield TableServiceParts(app, servicer, timers, index)
    finally:
        await timers.stop()
        await index.stop()


async def run(env: Mapping[str, str]) -> None:
    settings = load(env, TableServiceSettings.read)
    configure_logging(settings.server.log_level, service="table")
    log = get_logger("cardtable.table")
    names = LogNames.from_prefix(settings.event_prefix)
    connection = await connect_nats_from_settings(
        settings.nats, name="table-service", inbox_prefix=names.inbox_prefix(TABLE), logger=log
    )
    channel = grpc.aio.insecure_channel(settings.rules.address)
    rules = PipelinedRules(channel, linger_seconds=settings.pipeline_linger_seconds)
    registry = new_registry()
    try:
        async with table_service_parts(
            connection.client,
            connection.jetstream,
            rules,
            TokenCodec(
                settings.token_signing_key,
                previous_keys=settings.previous_token_keys,
                max_lifetime_seconds=settings.token_max_lifetime_seconds,
            ),
            names,
            registry=registry,
            lobby_finished_retention_seconds=settings.lobby_finished_retention_seconds,
            security=settings.log_security,
            limits=settings.limits,
            quotas=settings.quotas,
        ) as parts:
            await serve(settings.server, [parts.service()], registry=registry, logger=log)
    finally:
        await rules.close()
        await channel.close(None)
        await connection.close()


def main() -> int:
    return run_service("table", run)


if __name__ == "__main__":
    sys.exit(main())
