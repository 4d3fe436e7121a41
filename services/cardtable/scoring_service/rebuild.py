"""Rebuilding a projection from the whole log, and comparing two projections row for row.

``rebuild`` drops the given schema, migrates it afresh and projects every message of the stream
from sequence 1 up to the last one stored when it began, through the same
:class:`ProjectionWriter` as the live consumer, in long transactions. Build beside the live
projection (``schema="scoring_rebuild"``) and compare, or rebuild the live schema itself while
its consumer is stopped: on its next start the consumer sees a position it has not delivered
from and starts again there.

``compare_projections`` reports, table by table, the rows found in one schema and not the
other. Both are folds of the same log, and no row holds a time that did not come from an event,
so a rebuild caught up to the same position as the live projection must be identical to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import asyncpg
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchVerifier, signed_from_sequence
from cardtable.platform.logging import get_logger
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.committed_state import CommittedState
from cardtable.scoring_service.database import (
    create_schema_pool,
    is_transient,
    replace_connections_after,
)
from cardtable.scoring_service.log_reading import read_log, read_log_elsewhere
from cardtable.scoring_service.messages import StoredMessage
from cardtable.scoring_service.migrations import apply_migrations
from cardtable.scoring_service.settings import check_schema_name
from cardtable.scoring_service.writer import ProjectionOutcome, ProjectionWriter

if TYPE_CHECKING:
    from cardtable.scoring_service.database import Connection

_log = get_logger(__name__)

#: The projection's tables, compared in this order (schema_migrations is bookkeeping).
PROJECTION_TABLES = (
    "projection_position",
    "dead_letters",
    "players",
    "games",
    "seats",
    "game_players",
    "deals",
    "deal_seats",
    "ratings",
    "rating_changes",
)

#: How long a rebuild waits out PostgreSQL being away before it gives up.
RETRY_LIMIT_SECONDS = 120.0
FIRST_RETRY_SECONDS = 0.1
MAX_RETRY_SECONDS = 5.0

#: Messages projected per transaction while rebuilding: long runs of a table's batches fold
#: into one write of its rows, which is most of what makes a rebuild faster than live.
MESSAGES_PER_TRANSACTION = 5000


@dataclass(frozen=True)
class RebuildProgress:
    """Where a rebuild is, reported after each committed transaction."""

    position: int
    last_sequence: int
    messages: int
    events: int
    seconds: float


@dataclass(frozen=True)
class RebuildResult:
    """A finished rebuild."""

    schema: str
    position: int
    messages: int
    events: int
    dead_letters: int
    seconds: float

    @property
    def events_per_second(self) -> float:
        """Events projected per second of wall time."""
        return self.events / self.seconds if self.seconds > 0 else 0.0


async def rebuild(
    database_url: str,
    jetstream: JetStreamContext,
    log: LogNames,
    *,
    schema: str,
    on_progress: Callable[[RebuildProgress], None] | None = None,
    messages_per_transaction: int = MESSAGES_PER_TRANSACTION,
    reader_nats_url: str | None = None,
    verifier: BatchVerifier | None = None,
) -> RebuildResult:
    """Drop ``schema``, migrate it, and project the whole log into it (module docstring).

    ``verifier`` must be the live projection's (the table service's public keys), so that a
    rebuild sets aside exactly the batches the live projection did.

    With ``reader_nats_url``, a second process reads the log from that server while this one
    projects (``log_reading.read_log_elsewhere``): on more than one core, markedly faster.
    """
    check_schema_name(schema)
    started = time.monotonic()
    pool = await create_schema_pool(database_url, schema, max_size=2)
    try:
        async with pool.acquire() as connection:
            await connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            await apply_migrations(connection, schema)
        # The schema was just emptied and nothing else writes it: what this writer commits
        # is all it holds, so it need not be read back (committed_state.py).
        writer, info, _ = await prepared_writer(pool, jetstream, log, CommittedState(), verifier)
        last_sequence = info.state.last_seq if info else 0
        messages = events = dead_letters = position = 0
        if last_sequence:
            reading = (
                read_log_elsewhere(
                    reader_nats_url, log, until=last_sequence, chunk=messages_per_transaction
                )
                if reader_nats_url
                else read_log(jetstream, log, until=last_sequence, chunk=messages_per_transaction)
            )
            async with contextlib.aclosing(reading) as chunks:
                async for chunk in chunks:
                    outcome = await _project_retrying(writer, pool, chunk)
                    messages += len(chunk)
                    events += outcome.events
                    dead_letters += len(outcome.dead_letters)
                    position = outcome.position
                    if on_progress is not None:
                        on_progress(
                            RebuildProgress(
                                position=position,
                                last_sequence=last_sequence,
                                messages=messages,
                                events=events,
                                seconds=time.monotonic() - started,
                            )
                        )
        return RebuildResult(
            schema=schema,
            position=position,
            messages=messages,
            events=events,
            dead_letters=dead_letters,
            seconds=time.monotonic() - started,
        )
    finally:
        await close_pool(pool)


async def prepared_writer(
    pool: asyncpg.Pool,
    jetstream: JetStreamContext,
    log: LogNames,
    committed: CommittedState | None,
    verifier: BatchVerifier | None,
) -> tuple[ProjectionWriter, api.StreamInfo | None, int]:
    """A writer into ``pool``'s schema for the log's stream as it is now: the stream's info
    (None when there is none yet) and the schema's position in it."""
    writer = ProjectionWriter(pool, log, committed, verifier)
    try:
        info = await jetstream.stream_info(log.stream)
    except NotFoundError:
        info = None
    writer.signed_from = signed_from_sequence(info.config.metadata if info else None)
    position = await writer.prepare(info.created if info else None)
    return writer, info, position


async def _project_retrying(
    writer: ProjectionWriter, pool: asyncpg.Pool, chunk: Sequence[StoredMessage]
) -> ProjectionOutcome:
    """``writer.project(chunk)``, again after a transient failure (PostgreSQL restarting).

    A rebuild of a long log must not be lost to a restart halfway through. Trying the same
    chunk again is safe: its transaction committed all or nothing, and the writer drops what
    the position shows already projected. Up to ``RETRY_LIMIT_SECONDS``, then the error stands.
    """
    deadline = time.monotonic() + RETRY_LIMIT_SECONDS
    delay = FIRST_RETRY_SECONDS
    while True:
        try:
            return await writer.project(chunk)
        except Exception as error:
            if not is_transient(error) or time.monotonic() > deadline:
                raise
            _log.warning(
                "rebuilding: projecting failed, retrying",
                extra={"error": repr(error), "retry_in_seconds": delay},
            )
            await replace_connections_after(error, pool)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_RETRY_SECONDS)


@dataclass(frozen=True)
class TableComparison:
    """One table in two projections: row counts, and the rows only one side has."""

    table: str
    rows_in_first: int
    rows_in_second: int
    only_in_first: int
    only_in_second: int
    # A few of the differing rows, as PostgreSQL prints a row.
    examples: tuple[str, ...]

    @property
    def identical(self) -> bool:
        """Whether both sides hold exactly the same rows (duplicates counted)."""
        return self.only_in_first == 0 and self.only_in_second == 0


async def compare_projections(
    connection: Connection,
    first: str,
    second: str,
    *,
    examples: int = 3,
) -> list[TableComparison]:
    """Compare every projection table of schemas ``first`` and ``second``, row for row."""
    check_schema_name(first)
    check_schema_name(second)
    comparisons = []
    for table in PROJECTION_TABLES:
        counts = await connection.fetchrow(
            f"SELECT (SELECT count(*) FROM {first}.{table}) AS first_rows, "
            f"(SELECT count(*) FROM {second}.{table}) AS second_rows"
        )
        assert counts is not None
        only: list[int] = []
        shown: list[str] = []
        for left, right in ((first, second), (second, first)):
            differing = await connection.fetch(
                f"WITH differing AS (SELECT * FROM {left}.{table} "
                f"EXCEPT ALL SELECT * FROM {right}.{table}) "
                "SELECT count(*) OVER () AS total, differing::text AS row FROM differing "
                "LIMIT $1",
                max(examples, 1),
            )
            only.append(differing[0]["total"] if differing else 0)
            shown.extend(f"only in {left}: {record['row']}" for record in differing)
        comparisons.append(
            TableComparison(
                table=table,
                rows_in_first=counts["first_rows"],
                rows_in_second=counts["second_rows"],
                only_in_first=only[0],
                only_in_second=only[1],
                examples=tuple(shown),
            )
        )
    return comparisons
