"""Reading table logs straight from JetStream, for export, replay and audit tools."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc

from cardtable.eventlog.store import EventStore, StoredBatch
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import (
    BatchVerifier,
    LogKeyError,
    parse_public_keys,
    signed_from_sequence,
)
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.nats_access import OPERATOR
from cardtable.platform.settings import LogReadingSettings
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc


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
            self.store.stream, subjects_filter=f"{self.store.names.prefix}.table.>"
        )
        subjects = info.state.subjects or {}
        return sorted(subject.rsplit(".", 1)[1] for subject in subjects)

    async def signed_from(self) -> int:
        """The first stream sequence whose batches must be signed, as the stream records it."""
        info = await self.connection.jetstream.stream_info(self.store.stream)
        return signed_from_sequence(info.config.metadata)


@asynccontextmanager
async def log_reader(settings: LogReadingSettings) -> AsyncIterator[LogReader]:
    """A reader on the log ``settings`` name, as the operator user they carry."""
    names = LogNames.from_prefix(settings.prefix)
    connection = await connect_nats(
        settings.url,
        name="cardtable-cli",
        credentials=settings.credentials,
        inbox_prefix=names.inbox_prefix(OPERATOR),
        connect_timeout_seconds=10,
    )
    try:
        yield LogReader(connection, EventStore(connection.jetstream, names))
    finally:
        await connection.close()


async def verifying_keys(env: Mapping[str, str]) -> BatchVerifier | None:
    """The public keys an audit checks signatures with: ``LOG_VERIFYING_KEYS`` (base64 or PEM),
    else the table service's own list (``GetLogKeys`` at ``TABLE_ADDRESS``), else None.

    Raises ``LogKeyError`` for keys that cannot be read and ``RuntimeError`` when the table
    service cannot be asked.
    """
    text = env.get("LOG_VERIFYING_KEYS", "").strip()
    if text:
        return BatchVerifier(parse_public_keys(text))
    address = env.get("TABLE_ADDRESS", "").strip()
    if not address:
        return None
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            reply = await table_pb2_grpc.TableServiceStub(channel).GetLogKeys(
                table_pb2.GetLogKeysRequest(), timeout=10
            )
        except grpc.aio.AioRpcError as error:
            raise RuntimeError(
                f"cannot ask the table service at {address} for its log keys: {error.details()}"
            ) from None
    if not reply.keys:
        raise LogKeyError(f"the table service at {address} published no log keys")
    return BatchVerifier(key.public_key for key in reply.keys)
