"""Migrations: versioned files applied once, in order, recorded; an edited one is refused."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from cardtable.scoring_service.migrations import MigrationError, apply_migrations, load_migrations


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    migrations = load_migrations()
    assert [m.version for m in migrations] == list(range(1, len(migrations) + 1))
    assert migrations[0].name == "projection"


async def test_migrations_apply_once_and_are_recorded(fresh_database_url: str) -> None:
    connection = await asyncpg.connect(fresh_database_url)
    try:
        applied = await apply_migrations(connection, "scoring_a")
        again = await apply_migrations(connection, "scoring_a")
        recorded = await connection.fetch(
            "SELECT version, name FROM scoring_a.schema_migrations ORDER BY version"
        )
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'scoring_a'"
        )
    finally:
        await connection.close()
    assert [m.version for m in applied] == [m.version for m in load_migrations()]
    assert again == []
    assert [(r["version"], r["name"]) for r in recorded] == [
        (m.version, m.name) for m in load_migrations()
    ]
    assert {"games", "ratings", "leaderboard", "dead_letters"} <= {r["table_name"] for r in tables}


async def test_replicas_starting_together_migrate_once(fresh_database_url: str) -> None:
    connections = [await asyncpg.connect(fresh_database_url) for _ in range(3)]
    try:
        results = await asyncio.gather(*(apply_migrations(c, "scoring_b") for c in connections))
    finally:
        for connection in connections:
            await connection.close()
    assert sorted(len(applied) for applied in results) == [0, 0, len(load_migrations())]


async def test_a_migration_edited_after_it_was_applied_is_refused(
    fresh_database_url: str,
) -> None:
    connection = await asyncpg.connect(fresh_database_url)
    try:
        await apply_migrations(connection, "scoring_c")
        await connection.execute(
            "UPDATE scoring_c.schema_migrations SET checksum = 'x' WHERE version = 1"
        )
        with pytest.raises(MigrationError, match="was edited after it was applied"):
            await apply_migrations(connection, "scoring_c")
        await connection.execute(
            "INSERT INTO scoring_c.schema_migrations VALUES (99, 'later', 'y')"
        )
        with pytest.raises(MigrationError, match=r"has migrations \[99\]"):
            await apply_migrations(connection, "scoring_c")
    finally:
        await connection.close()
