"""Composition root of the bot service: computer players for the table service's seats.

Run it with ``cardtable-bots`` (or ``python -m cardtable.bot_service.main``); settings come
from the environment (see :mod:`cardtable.bot_service.settings`) and are checked at start-up.

The service listens for seat requests, claims each seat in a NATS key-value bucket (so that
replicas never share one), and plays its seats through the table service's gRPC API with its
own bot tokens, exactly as a person's client would. It serves gRPC health and Prometheus
metrics; on SIGTERM it stops playing and releases its claims so that other replicas take the
seats over at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from cardtable.bot_service.claims import SeatClaims
from cardtable.bot_service.metrics import BotMetrics
from cardtable.bot_service.requests import SeatRequests
from cardtable.bot_service.settings import BotServiceSettings, BotTuning
from cardtable.bot_service.supervisor import BotSupervisor
from cardtable.bot_service.table_client import BotCredentials, TableClient
from cardtable.bots.registry import strategy_by_name
from cardtable.platform.entrypoint import run_service
from cardtable.platform.grpc_server import RunningServer, serve
from cardtable.platform.log_names import LogNames
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.metrics import new_registry
from cardtable.platform.nats import connect_nats_from_settings
from cardtable.platform.nats_access import BOTS
from cardtable.platform.tokens import TokenCodec


@dataclass
class BotServiceParts:
    """What the service is made of, for ``main`` and for in-process tests."""

    supervisor: BotSupervisor
    claims: SeatClaims
    requests: SeatRequests
    metrics: BotMetrics
    client: TableClient


@asynccontextmanager
async def bot_service_parts(
    nats_client: NatsClient,
    jetstream: JetStreamContext,
    table_channel: grpc.aio.Channel,
    tokens: TokenCodec,
    names: LogNames,
    tuning: BotTuning,
    default_strategy: str,
    registry: CollectorRegistry | None = None,
) -> AsyncIterator[BotServiceParts]:
    """Build and start the bot service on an open NATS connection and table channel."""
    metrics = BotMetrics(registry if registry is not None else CollectorRegistry())
    claims = SeatClaims(jetstream, names.claims_bucket, tuning.replica_id, tuning.claim_ttl_seconds)
    await claims.open()
    client = TableClient(table_channel, BotCredentials(tokens, f"bots:{tuning.replica_id}"))
    supervisor = BotSupervisor(
        client=client,
        claims=claims,
        strategies=strategy_by_name,
        default_strategy=default_strategy,
        metrics=metrics,
        max_seats=tuning.max_seats,
        max_waiting_seats=tuning.max_waiting_seats,
        rescan_seconds=tuning.rescan_seconds,
        reclaim_grace_seconds=tuning.reclaim_grace_seconds,
    )
    requests = SeatRequests(
        nats_client, names.bot_requests, names.bot_queue_group, supervisor.on_request
    )
    # Listen first, then scan: a request sent meanwhile is either heard or found by the scan.
    await requests.start()
    try:
        await supervisor.start()
        yield BotServiceParts(supervisor, claims, requests, metrics, client)
    finally:
        await requests.stop()
        await supervisor.stop()


async def run(
    env: Mapping[str, str],
    *,
    stop_requested: asyncio.Event | None = None,
    on_started: Callable[[RunningServer], None] | None = None,
) -> None:
    """Serve until SIGTERM or Ctrl-C (or ``stop_requested``, for tests)."""
    settings = BotServiceSettings.from_env(env)
    configure_logging(settings.server.log_level, service="bots")
    log = get_logger("cardtable.bots", replica_id=settings.tuning.replica_id)
    registry = new_registry()
    connection = await connect_nats_from_settings(
        settings.nats,
        name="bot-service",
        inbox_prefix=settings.names.inbox_prefix(BOTS),
        logger=log,
    )
    channel = grpc.aio.insecure_channel(settings.table_address)
    try:
        async with bot_service_parts(
            connection.client,
            connection.jetstream,
            channel,
            TokenCodec(settings.token_signing_key),
            settings.names,
            settings.tuning,
            settings.default_strategy,
            registry,
        ):
            log.info(
                "bot service playing",
                extra={
                    "default_strategy": settings.default_strategy,
                    "max_seats": settings.tuning.max_seats,
                    "max_waiting_seats": settings.tuning.max_waiting_seats,
                },
            )
            await serve(
                settings.server,
                [],
                registry=registry,
                stop_requested=stop_requested,
                on_started=on_started,
                logger=log,
            )
    finally:
        await channel.close(None)
        await connection.close()


def main() -> int:
    return run_service("bot", run)


if __name__ == "__main__":
    sys.exit(main())
