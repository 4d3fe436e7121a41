"""Versioned SQL migrations, applied in order at start-up and recorded in ``schema_migrations``.

Migrations are the files ``migrations/NNNN_name.sql`` of this package, numbered from 0001 with
no gap. ``apply_migrations`` creates the schema if needed and applies, in one transaction, every
migration not yet recorded there; an advisory lock makes replicas starting together take turns.
A migration that was edited after it was applied is refused: the database would no longer be
what its history says.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from cardtable.scoring_service.settings import check_schema_name

if TYPE_CHECKING:
    from cardtable.scoring_service.database import Connection

MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(RuntimeError):
    """The migrations on disk and the ones recorded in the database do not fit together."""


@dataclass(frozen=True)
class Migration:
    """One versioned SQL file."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """SHA-256 of the SQL text, to notice a migration edited after it was applied."""
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations() -> list[Migration]:
    """This package's migrations in version order; a gap or a duplicate number is an error."""
    folder = resources.files("cardtable.scoring_service") / "migrations"
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = MIGRATION_FILE.match(entry.name)
        if match is None:
            continue
        found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    if not found:
        raise MigrationError(f"no migrations in {folder}: were the .sql files installed?")
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if versions != list(range(1, len(found) + 1)):
        raise MigrationError(f"migrations must be numbered 1, 2, 3... with no gap: {versions}")
    return found


async def apply_migrations(connection: Connection, schema: str) -> list[Migration]:
    """Bring ``schema`` up to date; returns the migrations applied now (empty if none)."""
    check_schema_name(schema)
    migrations = load_migrations()
    applied_now: list[Migration] = []
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))", f"cardtable.scoring.migrate.{schema}"
        )
        await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await connection.execute(f"SET LOCAL search_path TO {schema}")
        await connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """
        )
        recorded = {
            row["version"]: row["checksum"]
            for row in await connection.fetch("SELECT version, checksum FROM schema_migrations")
        }
        unknown = sorted(set(recorded) - {migration.version for migration in migrations})
        if unknown:
            raise MigrationError(
                f"schema {schema} has migrations {unknown} this version of the service lacks"
            )
        for migration in migrations:
            checksum = recorded.get(migration.version)
            if checksum is not None:
                if checksum != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.version:04d}_{migration.name} was edited after "
                        f"it was applied to schema {schema}; add a new migration instead"
                    )
                continue
            await connection.execute(migration.sql)
            await connection.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
            applied_now.append(migration)
    return applied_now
