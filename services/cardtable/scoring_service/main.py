"""Composition root of the scoring service: settings, database, consumer, gRPC server.

Run it with ``python -m cardtable.scoring_service.main`` (or the ``cardtable-scoring`` entry
point). Settings come from the environment: ``NATS_URL`` and ``DATABASE_URL`` (required),
``EVENT_PREFIX``, ``SCORING_CONSUMER``, ``SCORING_SCHEMA``, ``GRPC_PORT``, ``METRICS_PORT``,
``LOG_LEVEL`` and the tuning knobs of :mod:`cardtable.scoring_service.settings`.

Start-up applies the schema migrations, then the live projection consumes the event log while
the server answers from the projection. The service stops on SIGTERM, or when the consumer
fails in a way it cannot wait out (then with that error).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping

import asyncpg

from cardtable.platform.entrypoint import run_service
from cardtable.platform.grpc_server import RunningServer, Service, serve
from cardtable.platform.log_names import LogNames
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.metrics import new_registry
from cardtable.platform.nats import connect_nats_from_settings
from cardtable.platform.nats_access import SCORING
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.consumer import ProjectionConsumer
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.servicer import ScoringServicer
from cardtable.scoring_service.settings import ScoringSettings
from cardtable.scoring_service.writer import ProjectionWriter
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name


def scoring_service(pool: asyncpg.Pool, log: LogNames) -> Service:
    """The scoring servicer on a projection pool, ready to add to a server."""
    return Service(
        name=SERVICE_NAME,
        servicer=ScoringServicer(pool, log),
        add_to_server=scoring_pb2_grpc.add_ScoringServiceServicer_to_server,
    )


async def run(
    env: Mapping[str, str],
    *,
    stop_requested: asyncio.Event | None = None,
    on_started: Callable[[RunningServer], None] | None = None,
) -> None:
    """Serve until SIGTERM or Ctrl-C (or ``stop_requested``, for tests)."""
    settings = ScoringSettings.from_env(env)
    configure_logging(settings.server.log_level, service="scoring")
    logger = get_logger("cardtable.scoring")
    registry = new_registry()
    schema, log = settings.consumer.schema, settings.consumer.log
    pool = await create_schema_pool(
        settings.postgres.url,
        schema,
        min_size=settings.postgres.pool_min_size,
        max_size=settings.postgres.pool_max_size,
        connect_timeout_seconds=settings.postgres.connect_timeout_seconds,
    )
    try:
        async with pool.acquire() as connection:
            applied = await apply_migrations(connection, schema)
        logger.info(
            "schema up to date",
            extra={"schema": schema, "applied": [m.version for m in applied]},
        )
        nats = await connect_nats_from_settings(
            settings.nats, name="scoring", inbox_prefix=log.inbox_prefix(SCORING), logger=logger
        )
        try:
            consumer = ProjectionConsumer(
                nats.jetstream,
                ProjectionWriter(
                    pool, log, CommittedState.for_live_consumer(), settings.consumer.verifier
                ),
                settings.consumer,
                ProjectionMetrics(registry),
                logger,
                reader=SequenceReader(nats.client, log.stream),
            )
            stopping = stop_requested or asyncio.Event()
            consuming = asyncio.create_task(consumer.run())
            consuming.add_done_callback(lambda _: stopping.set())
            await serve(
                settings.server,
                [scoring_service(pool, log)],
                registry=registry,
                stop_requested=stopping,
                handle_signals=stop_requested is None,
                on_started=on_started,
                logger=logger,
            )
            consumer.stop()
            await consuming  # raises what stopped the consumer, if it failed
        finally:
            await nats.close()
    finally:
        await close_pool(pool)


def main() -> int:
    return run_service("scoring", run)


if __name__ == "__main__":
    sys.exit(main())
