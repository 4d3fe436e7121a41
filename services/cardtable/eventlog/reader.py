"""Reading table logs straight from JetStream, for export, replay and audit tools."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.table_service.main import EventNames
from cardtable.table_service.store import EventStore, StoredBatch


@dataclass
class LogReader:
    """One connection, one event store: read tables' batches and list the tables."""

    connection: NatsConnection
    store: EventStore

    async def table(self, table_id: str) -> list[StoredBatch]:
        return [stored async for stored in self.store.read(table_id)]

    async def table_ids(self) -> list[str]:
        """Every table that has a subject in the stream."""
        info = await self.connection.jetstream.stream_info(
            self.store.stream, subjects_filter=f"{self.store.subject_prefix}.table.>"
        )
        subjects = info.state.subjects or {}
        return sorted(subject.rsplit(".", 1)[1] for subject in subjects)


@asynccontextmanager
async def log_reader(
    nats_url: str | None = None, prefix: str | None = None
) -> AsyncIterator[LogReader]:
    """A reader on ``NATS_URL`` / ``EVENT_PREFIX`` (or the values given)."""
    url = nats_url or os.environ.get("NATS_URL")
    if not url:
        raise RuntimeError("set NATS_URL (for example nats://127.0.0.1:4222) to read the event log")
    names = EventNames(prefix or os.environ.get("EVENT_PREFIX", "cardtable"))
    connection = await connect_nats(url, name="cardtable-cli", connect_timeout_seconds=10)
    try:
        yield LogReader(connection, EventStore(connection.jetstream, names.stream, names.prefix))
    finally:
        await connection.close()
