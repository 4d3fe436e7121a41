"""A rebuilt projection compared with the live one at the same log position.

``cardtable rebuild`` rebuilds up to the log's end as it was when it began; the live projection
goes on meanwhile whenever games are being played. Rows of a table that moved after the
rebuild's position then differ although neither projection is wrong. So the rebuilt schema is
brought forward to the live projection's position, and the two are compared in one snapshot
(REPEATABLE READ) whose first read finds both positions equal; when the live projection moved
again in between, the rebuilt one catches up once more.
"""

from __future__ import annotations

import asyncio

from nats.js import JetStreamContext

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchVerifier
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.log_reading import read_log
from cardtable.scoring_service.rebuild import (
    MESSAGES_PER_TRANSACTION,
    TableComparison,
    compare_projections,
    prepared_writer,
)
from cardtable.scoring_service.settings import check_schema_name
from cardtable.scoring_service.writer import read_position

#: Tries to find both projections at the same position before giving up.
ALIGN_ATTEMPTS = 30
#: Wait before looking again while the live projection is behind the rebuilt one.
BEHIND_WAIT_SECONDS = 0.2


class NotAlignedError(RuntimeError):
    """The live projection never stood still at the rebuilt one's position."""


async def extend(
    database_url: str,
    jetstream: JetStreamContext,
    log: LogNames,
    *,
    schema: str,
    until: int,
    verifier: BatchVerifier | None,
) -> int:
    """Project the log's messages after ``schema``'s position up to ``until`` into it; its new
    position."""
    pool = await create_schema_pool(database_url, schema, max_size=1)
    try:
        # Rows are read back before each transaction: this writer did not write them all.
        writer, _, position = await prepared_writer(pool, jetstream, log, None, verifier)
        reading = read_log(
            jetstream, log, until=until, chunk=MESSAGES_PER_TRANSACTION, after=position
        )
        async for chunk in reading:
            position = (await writer.project(chunk)).position
        return position
    finally:
        await close_pool(pool)


async def compare_at_same_position(
    database_url: str,
    jetstream: JetStreamContext,
    log: LogNames,
    *,
    live: str,
    rebuilt: str,
    verifier: BatchVerifier | None,
) -> tuple[int, list[TableComparison]]:
    """The position both stood at, and their comparison table by table there."""
    check_schema_name(live)
    check_schema_name(rebuilt)
    pool = await create_schema_pool(database_url, rebuilt, max_size=1)
    try:
        for _ in range(ALIGN_ATTEMPTS):
            async with (
                pool.acquire() as connection,
                connection.transaction(isolation="repeatable_read", readonly=True),
            ):
                live_at = await read_position(connection, log.stream, live)
                rebuilt_at = await read_position(connection, log.stream, rebuilt)
                if live_at == rebuilt_at:
                    return live_at, await compare_projections(connection, live, rebuilt)
            if live_at > rebuilt_at:
                await extend(
                    database_url,
                    jetstream,
                    log,
                    schema=rebuilt,
                    until=live_at,
                    verifier=verifier,
                )
            else:
                await asyncio.sleep(BEHIND_WAIT_SECONDS)
        raise NotAlignedError(
            f"the live projection did not stand still at the rebuilt one's position in "
            f"{ALIGN_ATTEMPTS} tries (live {live_at}, rebuilt {rebuilt_at})"
        )
    finally:
        await close_pool(pool)
