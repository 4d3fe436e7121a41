"""An asyncpg connection pool that waits for PostgreSQL to come up.

Handlers borrow a connection with ``async with pool.acquire() as connection`` and wrap writes in
``connection.transaction()``; the pool itself is created once by the composition root.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeAlias

import asyncpg

from cardtable.platform.logging import BoundLogger, get_logger
from cardtable.platform.retry import retry_until
from cardtable.platform.settings import PostgresSettings

# Run on each new connection of a pool, e.g. to register JSON codecs. A string because
# asyncpg's classes are generic only in their stubs, not at run time.
ConnectionInit: TypeAlias = (
    "Callable[[asyncpg.Connection[asyncpg.Record]], Coroutine[Any, Any, None]]"
)

# Errors that mean "the server is not there yet", as opposed to "you asked for something wrong"
# (bad password, unknown database), which no amount of waiting fixes.
NOT_YET_REACHABLE: tuple[type[BaseException], ...] = (
    OSError,  # connection refused while the server boots, DNS not yet published
    TimeoutError,
    asyncpg.CannotConnectNowError,  # "the database system is starting up"
    asyncpg.TooManyConnectionsError,
    asyncpg.ConnectionDoesNotExistError,  # closed under us during a restart
)


async def create_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    connect_timeout_seconds: float = 30.0,
    init: ConnectionInit | None = None,
    logger: BoundLogger | None = None,
) -> asyncpg.Pool:
    """Create a pool and prove it can reach the server, retrying until the deadline.

    ``init`` runs on every new connection (register type codecs there). A pool with
    ``min_size=0`` opens nothing by itself, so one query checks the server really answers.
    """
    log = logger or get_logger(__name__)

    async def attempt() -> asyncpg.Pool:
        pool = await asyncpg.create_pool(
            url, min_size=min_size, max_size=max_size, init=init, timeout=10
        )
        try:
            await pool.fetchval("select 1")
        except BaseException:
            await pool.close()
            raise
        return pool

    return await retry_until(
        attempt,
        what="PostgreSQL",
        timeout_seconds=connect_timeout_seconds,
        retry_on=NOT_YET_REACHABLE,
        logger=log,
    )


async def create_pool_from_settings(
    settings: PostgresSettings,
    *,
    init: ConnectionInit | None = None,
    logger: BoundLogger | None = None,
) -> asyncpg.Pool:
    """``create_pool`` with the bounds and deadline read from the environment."""
    return await create_pool(
        settings.url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        connect_timeout_seconds=settings.connect_timeout_seconds,
        init=init,
        logger=logger,
    )


async def close_pool(pool: asyncpg.Pool, timeout_seconds: float = 10.0) -> None:
    """Close gracefully, waiting for borrowed connections, but never hang a shutdown on it."""
    try:
        await asyncio.wait_for(pool.close(), timeout_seconds)
    except TimeoutError:
        pool.terminate()
