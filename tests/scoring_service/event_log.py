"""Fixture event logs for the scoring tests: games from the simulation, appended to a stream.

``TableLog`` and its helpers live in :mod:`cardtable_tools.simulation.event_log` (the scoring
benchmark writes its logs with them too); they are re-exported here so that tests read
``from tests.scoring_service.event_log import TableLog, people, publish``.

    log = TableLog("whist", people("ann", "bob", "cy"), seed=1)
    log.open_and_start()
    log.play_deals(3)
    log.leave(seat=1)
    log.play_to_end()
    await publish(jetstream, names, log.batches)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import SIGNATURE_HEADER, BatchSigner, batch_sha256
from cardtable.platform.log_streams import events_stream_config
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.simulation.event_log import (
    BOT,
    EPOCH,
    PERSON,
    PUBLIC,
    SERVER_ONLY,
    Player,
    TableLog,
    bot,
    interleave,
    people,
    public,
)

__all__ = [
    "BOT",
    "EPOCH",
    "PERSON",
    "PUBLIC",
    "SERVER_ONLY",
    "Player",
    "TableLog",
    "bot",
    "create_event_stream",
    "interleave",
    "people",
    "public",
    "publish",
]


async def create_event_stream(jetstream: JetStreamContext, names: LogNames) -> None:
    """The events stream as every deployment has it."""
    await jetstream.add_stream(events_stream_config(names))


async def publish(
    jetstream: JetStreamContext,
    names: LogNames,
    batches: Iterable[events_pb2.EventBatch],
    *,
    message_ids: bool = True,
    expect_last_sequence: bool = True,
    signer: BatchSigner | None = None,
) -> list[int]:
    """Append each batch to its table's subject with the table service's headers.

    Appends are pipelined (acks awaited at the end), so ``Nats-Expected-Last-Subject-Sequence``
    is predicted: each new message takes the stream's next sequence. With ``signer`` each batch
    is chained to its table's previous one and signed, as the table service writes them.
    """
    next_sequence = (await jetstream.stream_info(names.stream)).state.last_seq + 1
    last_on_subject: dict[str, int] = {}
    last_digest: dict[str, bytes] = {}
    pending = []
    for batch in batches:
        subject = names.table_subject(batch.table_id)
        headers = {"Cardtable-Schema": str(batch.schema_version)}
        payload = batch.SerializeToString()
        if signer is not None:
            if subject not in last_digest:
                try:
                    last_digest[subject] = batch_sha256(
                        (await jetstream.get_last_msg(names.stream, subject)).data or b""
                    )
                except NotFoundError:
                    last_digest[subject] = b""
            signed = events_pb2.EventBatch()
            signed.CopyFrom(batch)
            signed.previous_batch_sha256 = last_digest[subject]
            payload = signed.SerializeToString()
            last_digest[subject] = batch_sha256(payload)
            headers[SIGNATURE_HEADER] = signer.sign(payload)
        if message_ids:
            headers["Nats-Msg-Id"] = batch.command_id
        if expect_last_sequence:
            if subject not in last_on_subject:
                try:
                    last = await jetstream.get_last_msg(names.stream, subject)
                    last_on_subject[subject] = last.seq or 0
                except NotFoundError:
                    last_on_subject[subject] = 0
            headers["Nats-Expected-Last-Subject-Sequence"] = str(last_on_subject[subject])
            last_on_subject[subject] = next_sequence
            next_sequence += 1
        pending.append(
            await jetstream.publish_async(subject, payload, stream=names.stream, headers=headers)
        )
    return [ack.seq for ack in await asyncio.gather(*pending)]
