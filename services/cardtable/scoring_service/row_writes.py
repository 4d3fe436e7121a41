"""Writing a transaction's changed rows: one statement per row type, or COPY for many.

A few rows of a type go as one ``executemany`` of an upsert. From :data:`COPY_FROM_ROWS` rows
on (a rebuild's chunk, a live consumer catching up), they are copied in PostgreSQL's binary
COPY format into a temporary staging table and upserted from it in one statement: COPY moves a
row for a fraction of the client and server work of a bound statement. Insert-only rows are
copied straight into their table. Either way the rows land the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cardtable.scoring_service.rows import DeadLetterRow, PlayerRow, RatingChangeRow, Row

if TYPE_CHECKING:
    from cardtable.scoring_service.database import Connection

#: Rows that are only ever inserted: a conflict would mean a fold went wrong.
INSERT_ONLY = frozenset({RatingChangeRow, DeadLetterRow})
#: Rows of one type from which COPY through a staging table beats one upsert per row.
COPY_FROM_ROWS = 200


def _updates(row_type: type[Row]) -> str:
    if row_type is PlayerRow:
        # The first sighting stays; an empty name (a bot handed a seat) keeps the known one.
        return (
            "kind = EXCLUDED.kind, display_name = CASE WHEN EXCLUDED.display_name <> '' "
            "THEN EXCLUDED.display_name ELSE players.display_name END"
        )
    return ", ".join(
        f"{column} = EXCLUDED.{column}"
        for column in row_type.columns()
        if column not in row_type.KEY
    )


def _conflict(row_type: type[Row]) -> str:
    if row_type in INSERT_ONLY:
        return ""
    return f" ON CONFLICT ({', '.join(row_type.KEY)}) DO UPDATE SET {_updates(row_type)}"


def upsert_sql(row_type: type[Row]) -> str:
    """The statement ``executemany`` writes each row of ``row_type`` with."""
    columns = row_type.columns()
    placeholders = ", ".join(f"${index}" for index in range(1, len(columns) + 1))
    listed = ", ".join(columns)
    return f"INSERT INTO {row_type.TABLE} ({listed}) VALUES ({placeholders}){_conflict(row_type)}"


def staging_table(row_type: type[Row]) -> str:
    return f"staging_{row_type.TABLE}"


def staging_sql(row_type: type[Row]) -> str:
    """Creates the session's staging table for ``row_type``, emptied at every commit."""
    return (
        f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging_table(row_type)} "
        f"(LIKE {row_type.TABLE}) ON COMMIT DELETE ROWS"
    )


def upsert_from_staging_sql(row_type: type[Row]) -> str:
    listed = ", ".join(row_type.columns())
    return (
        f"INSERT INTO {row_type.TABLE} ({listed}) SELECT {listed} "
        f"FROM {staging_table(row_type)}{_conflict(row_type)}"
    )


#: Each row type's three statements, built once (``write_rows`` runs in every transaction).
_STATEMENTS: dict[type[Row], tuple[str, str, str]] = {}


def _statements(row_type: type[Row]) -> tuple[str, str, str]:
    found = _STATEMENTS.get(row_type)
    if found is None:
        found = (upsert_sql(row_type), staging_sql(row_type), upsert_from_staging_sql(row_type))
        _STATEMENTS[row_type] = found
    return found


async def write_rows(
    connection: Connection, row_type: type[Row], rows: Sequence[tuple[object, ...]]
) -> None:
    """Write ``rows`` (each key once) of ``row_type`` inside the caller's transaction."""
    upsert, staging, from_staging = _statements(row_type)
    if len(rows) < COPY_FROM_ROWS:
        await connection.executemany(upsert, rows)
        return
    columns = list(row_type.columns())
    if row_type in INSERT_ONLY:
        await connection.copy_records_to_table(row_type.TABLE, records=rows, columns=columns)
        return
    await connection.execute(staging)
    await connection.copy_records_to_table(staging_table(row_type), records=rows, columns=columns)
    await connection.execute(from_staging)
