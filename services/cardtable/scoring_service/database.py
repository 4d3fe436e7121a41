"""PostgreSQL connections that see one projection schema, and which errors are worth a retry.

A projection lives in its own schema (``scoring`` live, another name for a rebuild beside it),
and its SQL names tables without a schema. The schema is chosen per pool through
``search_path`` given at connection start-up: asyncpg's pool runs ``RESET ALL`` when a
connection is released, which undoes a ``SET`` but restores a start-up value.

    >>> schema_url("postgresql://postgres@db:5432/cardtable", "scoring")
    'postgresql://postgres@db:5432/cardtable?search_path=scoring'
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit

import asyncpg

from cardtable.platform.postgres import create_pool
from cardtable.scoring_service.settings import check_schema_name

if TYPE_CHECKING:  # asyncpg's classes are generic for the type checker only
    from asyncpg.pool import PoolConnectionProxy

    #: A connection of its own or one borrowed from a pool.
    Connection = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]

#: Errors after which the same work may well succeed: the server is away, restarting, out of
#: connections, or chose us as a deadlock victim; or asyncpg found one of its connections in a
#: state no query can be run in (seen after PostgreSQL restarts under load: "cannot switch to
#: state 15; another operation (2) is in progress"), which fresh connections cure
#: (:func:`replace_connections_after`). Anything else is a fault in the data or code.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,  # class 08
    asyncpg.OperatorInterventionError,  # class 57: admin shutdown, crash, starting up
    asyncpg.InsufficientResourcesError,  # class 53: too many connections, disk full
    asyncpg.TransactionRollbackError,  # class 40: serialization failure, deadlock
    asyncpg.InternalClientError,  # the client's own connection state (see above)
)


def is_transient(error: BaseException) -> bool:
    """Whether retrying the same work later may succeed.

    asyncpg raises ``InterfaceError`` itself when the connection closed under us; its
    subclasses are the client's own refusals (a value it cannot encode...), which recur.
    """
    return isinstance(error, TRANSIENT_ERRORS) or type(error) is asyncpg.InterfaceError


async def replace_connections_after(error: BaseException, pool: asyncpg.Pool) -> None:
    """After a connection-state error, have the pool open new connections for later work."""
    if isinstance(error, asyncpg.InternalClientError):
        await pool.expire_connections()


def is_refused_data(error: BaseException) -> bool:
    """Whether the values themselves were refused, so the message that carried them is at fault.

    That is PostgreSQL's data exceptions and integrity violations (SQLSTATE classes 22 and 23)
    and asyncpg refusing to encode a value. Any other error (a missing table, a lost privilege)
    is the database's and would refuse every message alike.
    """
    return isinstance(error, asyncpg.DataError | asyncpg.IntegrityConstraintViolationError) or (
        isinstance(error, asyncpg.InterfaceError) and isinstance(error, ValueError)
    )


def schema_url(database_url: str, schema: str) -> str:
    """``database_url`` with ``search_path`` set to ``schema`` for every connection."""
    check_schema_name(schema)
    parts = urlsplit(database_url)
    query = [(key, value) for key, value in parse_qsl(parts.query) if key != "search_path"]
    query.append(("search_path", schema))
    return parts._replace(query=urlencode(query)).geturl()


async def create_schema_pool(
    database_url: str,
    schema: str,
    *,
    min_size: int = 1,
    max_size: int = 4,
    connect_timeout_seconds: float = 30.0,
) -> asyncpg.Pool:
    """A pool whose connections resolve unqualified table names in ``schema``."""
    return await create_pool(
        schema_url(database_url, schema),
        min_size=min_size,
        max_size=max_size,
        connect_timeout_seconds=connect_timeout_seconds,
    )
