"""The event log the scoring benchmarks append: many tables, as the table service writes them.

Both scoring benchmarks (the rates of ``scoring_rates`` and the lag at a paced load of
``scoring_lag``) project the same kind of log, so it is made in one place. A pool of games is
played with the engine (``table_template``) and re-emitted under new table ids and players
(``interleave_copies``): byte for byte what the table service would have written for those
games, generated fast enough for tens of thousands of tables. ``TABLES_AT_ONCE`` tables are in
play at any moment, so consecutive messages mostly belong to different tables, as on a busy
server. Each message is one command (a move, a deal, a seat taken), with the headers
``EventStore.append`` sends, the expected last subject sequence included.
"""

from __future__ import annotations

import asyncio
import math
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from nats.js import JetStreamContext

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import SIGNATURE_HEADER, BatchSigner, batch_sha256
from cardtable.scoring_service.messages import KNOWN_SCHEMA_VERSION, SCHEMA_HEADER
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.simulation.event_log import (
    TableCopy,
    TableTemplate,
    interleave_copies,
    table_template,
)

#: Called with a step's name, the work done and the work in all (the same unit within a step).
Progress = Callable[[str, int, int], None]

#: Distinct games played per game in the pool the log is copied from.
POOL_GAMES_PER_KIND = 12
#: Tables in play at any moment while the log is written.
TABLES_AT_ONCE = 200
#: Consecutive batches that share one tree signature (log_signing.sign_many), about what the
#: table service signs together under load (``batches_per_signature`` of ``cardtable bench``).
SIGNED_TOGETHER = 40
#: Publishes awaiting their acks at once.
PUBLISH_WINDOW = 2000


@dataclass(frozen=True)
class GameMix:
    """Which games the log's tables play, in what shares."""

    description: str
    # (game, seats, options, weight)
    kinds: tuple[tuple[str, int, tuple[tuple[str, str], ...], int], ...]


#: Most tables Hearts quick games: a 10,000-table log of about 3.5 million events.
QUICK_MIX = GameMix(
    "85% Hearts quick games (one deal); 5% each Whist (4 players), 3-5-8, Belote, played to "
    "the end",
    (
        ("hearts", 4, (("quick", "true"),), 17),
        ("whist", 4, (), 1),
        ("358", 3, (), 1),
        ("belote", 4, (), 1),
    ),
)
#: The four games in equal numbers, Hearts played to 100: about 1,500 events a table.
FULL_MIX = GameMix(
    "the four games in equal numbers (Whist with 4 players), each played to the end",
    (
        ("hearts", 4, (), 1),
        ("whist", 4, (), 1),
        ("358", 3, (), 1),
        ("belote", 4, (), 1),
    ),
)


def game_pool(mix: GameMix, progress: Progress) -> list[TableTemplate]:
    """Distinct games played with the engine, each kind repeated by its weight in the mix."""
    pool: list[TableTemplate] = []
    total = POOL_GAMES_PER_KIND * len(mix.kinds)
    for kind_index, (game, seats, options, weight) in enumerate(mix.kinds):
        for game_index in range(POOL_GAMES_PER_KIND):
            seed = 1000 * kind_index + game_index
            template = table_template(game, seats, seed=seed, options=dict(options))
            pool.extend([template] * weight)
            progress(
                "playing the pool of games",
                kind_index * POOL_GAMES_PER_KIND + game_index + 1,
                total,
            )
    return pool


def log_schedule(pool: Sequence[TableTemplate], games: int) -> Iterator[tuple[TableCopy, int]]:
    """The log's messages in order; the same every time it is asked for."""
    return interleave_copies(pool, games, tables_at_once=TABLES_AT_ONCE, seed=games)


def games_for_messages(pool: Sequence[TableTemplate], messages: int) -> int:
    """Enough tables that the log's first ``messages`` messages all come from a full house.

    The log is read lazily, so tables beyond those reached cost nothing; twice the expected
    number (plus the tables in play) keeps ``TABLES_AT_ONCE`` tables interleaved up to the last
    message taken, rather than a tail of a few tables finishing alone.
    """
    mean = sum(len(template.batches) for template in pool) / len(pool)
    return 2 * math.ceil(messages / mean) + TABLES_AT_ONCE


@dataclass(frozen=True)
class LogMessage:
    """One message of the log, ready to append to a fresh stream."""

    #: Where it lands in the stream (the stream's first message is 1).
    sequence: int
    subject: str
    data: bytes
    headers: dict[str, str]
    #: Events in the message's batch.
    events: int


def log_messages(
    schedule: Iterable[tuple[TableCopy, int]],
    names: LogNames,
    signer: BatchSigner | None = None,
) -> Iterator[LogMessage]:
    """The schedule as messages for a fresh stream, appended in order.

    Each table's expected last subject sequence is the stream sequence of its previous message,
    as the table service's optimistic concurrency check sends it; so a message appended out of
    order, or twice, is refused by JetStream rather than silently kept. With ``signer`` each
    batch is chained to its table's previous one and every ``SIGNED_TOGETHER`` consecutive
    batches share a tree signature, as the table service writes them (a scoring service given
    the public key refuses anything else).
    """
    last_on_subject: dict[str, int] = {}
    last_digest: dict[str, bytes] = {}
    unsigned: list[LogMessage] = []
    for sequence, (copy, index) in enumerate(schedule, start=1):
        expected = last_on_subject.get(copy.table_id, 0)
        last_on_subject[copy.table_id] = sequence
        data, headers = copy.batch(index), _headers(copy, index, expected)
        if signer is not None:
            batch = events_pb2.EventBatch.FromString(data)
            batch.previous_batch_sha256 = last_digest.get(copy.table_id, b"")
            data = batch.SerializeToString()
            last_digest[copy.table_id] = batch_sha256(data)
        if index + 1 == len(copy.template.batches):
            del last_on_subject[copy.table_id]  # the table is over
            last_digest.pop(copy.table_id, None)
        message = LogMessage(
            sequence=sequence,
            subject=names.table_subject(copy.table_id),
            data=data,
            headers=headers,
            events=len(copy.template.events[index]),
        )
        if signer is None:
            yield message
            continue
        unsigned.append(message)
        if len(unsigned) == SIGNED_TOGETHER:
            yield from _signed(signer, unsigned)
            unsigned = []
    if signer is not None and unsigned:
        yield from _signed(signer, unsigned)


def _signed(signer: BatchSigner, messages: list[LogMessage]) -> list[LogMessage]:
    for message, header in zip(
        messages, signer.sign_many([message.data for message in messages]), strict=True
    ):
        message.headers[SIGNATURE_HEADER] = header
    return messages


async def append_log(
    js: JetStreamContext,
    names: LogNames,
    messages: Iterable[LogMessage],
    count: int,
    progress: Progress,
    step: str,
) -> int:
    """Append ``messages`` (``count`` of them) as fast as JetStream takes them; returns the
    stream's last sequence. Acks are awaited a window at a time, so a refused message stops
    the append within a window of where it happened."""
    pending = []
    sequence = 0
    for message in messages:
        sequence = message.sequence
        pending.append(
            await js.publish_async(
                message.subject, message.data, stream=names.stream, headers=message.headers
            )
        )
        if len(pending) >= PUBLISH_WINDOW:
            await asyncio.gather(*pending)
            pending.clear()
            progress(step, sequence, count)
    await asyncio.gather(*pending)
    progress(step, sequence, count)
    stored = (await js.stream_info(names.stream)).state.last_seq
    if stored != sequence:
        raise RuntimeError(f"the stream holds {stored} messages, {sequence} were appended")
    return sequence


def _headers(copy: TableCopy, index: int, expected_sequence: int) -> dict[str, str]:
    """The headers the table service's ``EventStore.append`` sends, trace context included."""
    command = f"{copy.table_id}/{index + 1}"
    return {
        "Nats-Msg-Id": f"{copy.table_id}:{command}",
        "Nats-Expected-Last-Subject-Sequence": str(expected_sequence),
        SCHEMA_HEADER: str(KNOWN_SCHEMA_VERSION),
        "traceparent": f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01",
    }
