"""Reading the whole log for a rebuild: in this process, or in a second one beside it.

:func:`read_log` reads the table subjects with an ordered push consumer. Reading costs about as
much CPU as projecting (nats-py parses every message in Python), so :func:`read_log_elsewhere`
runs the same reader in a second process (``python -m`` this module) and hands its chunks over
a pipe: the reader works on the next chunk while this process projects the last one, and a
rebuild on a machine with more than one core goes about as fast as the slower half instead of
the sum of both.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import struct
import sys
from collections.abc import AsyncGenerator
from datetime import datetime
from typing import BinaryIO

from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from cardtable.platform.entrypoint import run_async
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import SIGNATURE_HEADER
from cardtable.platform.nats import connect_nats
from cardtable.platform.nats_access import OPERATOR
from cardtable.platform.settings import credentials_from
from cardtable.scoring_service.headers import quick_header_parsing
from cardtable.scoring_service.messages import (
    SCHEMA_HEADER,
    StoredMessage,
    stored_at_from_nanoseconds,
)

READ_AHEAD_CHUNKS = 4
#: A read that brings nothing for this long has stalled (NATS away, the stream gone).
READ_IDLE_SECONDS = 30.0

#: A stored message as it crosses the pipe: plain values pickle faster than a dataclass.
Row = tuple[int, str, bytes, dict[str, str], datetime]
#: Each frame on the pipe starts with its length.
FRAME_HEADER = struct.Struct(">Q")


#: Where an acknowledgement subject keeps what a reader needs, by its number of tokens:
#: ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<time>.<pending>`` (9), and the
#: same after a domain and an account hash, with a random token last (12 or more).
_ACK_FIELDS = {9: (5, 7, 8), 12: (7, 9, 10)}


def _stored_and_pending(message: Msg) -> tuple[StoredMessage, int]:
    """The message as the writer takes it, and how many follow it in the stream.

    The same as ``stored_message``, but it reads the three fields it needs straight from the
    acknowledgement subject instead of building nats-py's whole ``Metadata`` (two dataclasses
    per message), which over a whole log was a sixth of the reader's time.
    """
    tokens = (message.reply or "").split(".")
    fields = _ACK_FIELDS.get(min(len(tokens), 12)) if tokens[:2] == ["$JS", "ACK"] else None
    if fields is None:
        metadata = message.metadata  # an unfamiliar form: nats-py knows best
        sequence, stored_at = metadata.sequence.stream, metadata.timestamp
        pending = metadata.num_pending
    else:
        sequence = int(tokens[fields[0]])
        stored_at = stored_at_from_nanoseconds(int(tokens[fields[1]]))
        pending = int(tokens[fields[2]])
    stored = StoredMessage(
        sequence=sequence,
        subject=message.subject,
        data=message.data,
        headers=message.headers or {},
        stored_at=stored_at,
    )
    return stored, pending


async def read_log(
    jetstream: JetStreamContext, log: LogNames, *, until: int, chunk: int, after: int = 0
) -> AsyncGenerator[list[StoredMessage]]:
    """The table subjects' messages after sequence ``after`` up to ``until``, in chunks of
    ``chunk``.

    An ordered push consumer (flow-controlled, no acknowledgements) reads faster than pull
    fetches in nats-py, and nothing about it outlives the read. Reading runs ahead of
    the caller by a few chunks, so the next chunk arrives while the last one is projected.
    """
    chunks: asyncio.Queue[list[StoredMessage] | Exception | None] = asyncio.Queue(
        maxsize=READ_AHEAD_CHUNKS
    )
    pending: list[StoredMessage] = []
    finished = False
    last_read = 0
    if until <= after:
        return

    async def receive(message: Msg) -> None:
        nonlocal pending, finished, last_read
        if finished:
            return
        stored, behind = _stored_and_pending(message)
        if last_read and stored.sequence != last_read + 1:
            # The stream denies deletes, so a gap means the client dropped messages (a slow
            # consumer): fail rather than build a projection that silently lacks them.
            finished = True
            await chunks.put(
                RuntimeError(f"read {log.stream} up to {last_read}, then {stored.sequence}")
            )
            return
        last_read = stored.sequence
        if stored.sequence <= until:
            pending.append(stored)
        if stored.sequence >= until or behind == 0:
            finished = True
        if finished or len(pending) >= chunk:
            batch, pending = pending, []
            if batch:
                await chunks.put(batch)  # blocks the reader: flow control holds the stream
            if finished:
                await chunks.put(None)

    with quick_header_parsing(jetstream):
        subscription = await jetstream.subscribe(
            log.tables_subject,
            stream=log.stream,
            ordered_consumer=True,
            config=_starting_after(after),
            cb=receive,
            # nats-py drops messages silently (a "slow consumer") once its buffer passes these
            # limits, and an ordered consumer only notices at its next idle heartbeat, which a
            # busy read never has. The server's flow control is what bounds the buffer here.
            pending_msgs_limit=0,
            pending_bytes_limit=0,
        )
        try:
            while True:
                try:
                    batch = await asyncio.wait_for(chunks.get(), READ_IDLE_SECONDS)
                except TimeoutError:
                    raise TimeoutError(
                        f"no message of {log.stream} for {READ_IDLE_SECONDS:g}s "
                        f"before sequence {until}"
                    ) from None
                if batch is None:
                    return
                if isinstance(batch, Exception):
                    raise batch
                yield batch
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()


def _starting_after(after: int) -> api.ConsumerConfig:
    """The subscription's start: the whole stream, or the first message after ``after``."""
    if not after:
        return api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL)
    return api.ConsumerConfig(
        deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after + 1
    )


def _rows(messages: list[StoredMessage]) -> list[Row]:
    """A chunk as it crosses the pipe: only the headers a projection reads (``decode`` and
    the signature check).

    Equal schema headers and subjects become one object each, which pickle then writes once
    per frame and the projector unpickles once: most messages share both with others.
    """
    shared: dict[object, object] = {}
    rows: list[Row] = []
    for message in messages:
        schema = message.headers.get(SCHEMA_HEADER)
        headers = shared.setdefault(schema, {} if schema is None else {SCHEMA_HEADER: schema})
        signature = message.headers.get(SIGNATURE_HEADER)
        if signature is not None:
            headers = {**headers, SIGNATURE_HEADER: signature}  # type: ignore[dict-item]
        subject = shared.setdefault(message.subject, message.subject)
        rows.append((message.sequence, subject, message.data, headers, message.stored_at))  # type: ignore[arg-type]
    return rows


def _send(stream: BinaryIO, item: object) -> None:
    """One frame: its length, then the pickled item (blocks while the pipe is full)."""
    payload = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(FRAME_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


async def _read_and_send(
    nats_url: str, log: LogNames, until: int, chunk: int, out: BinaryIO
) -> None:
    connection = await connect_nats(
        nats_url,
        name="cardtable-rebuild-reader",
        credentials=credentials_from(os.environ),
        inbox_prefix=log.inbox_prefix(OPERATOR),
    )
    try:
        reading = read_log(connection.jetstream, log, until=until, chunk=chunk)
        async with contextlib.aclosing(reading) as chunks:
            async for messages in chunks:
                _send(
                    out, _rows(messages)
                )  # blocks while the projector is busy: that is the backpressure
        _send(out, None)
    finally:
        await connection.close()


def main(argv: list[str] | None = None) -> int:
    """``NATS_URL=... python -m cardtable.scoring_service.log_reading PREFIX UNTIL CHUNK``.

    The reading process: frames of rows on standard output, ``None`` at the end, an error
    message (a ``str``) if reading failed. Run by :func:`read_log_elsewhere`, not by people.
    The URL comes from the environment, not the command line, where any local user could
    read credentials in it.
    """
    prefix, until, chunk = argv or sys.argv[1:]
    nats_url = os.environ["NATS_URL"]
    out = sys.stdout.buffer
    try:
        run_async(
            _read_and_send(nats_url, LogNames.from_prefix(prefix), int(until), int(chunk), out)
        )
    except Exception as error:
        _send(out, f"the log reader failed: {error!r}")
        return 1
    return 0


async def _receive(stdout: asyncio.StreamReader) -> object:
    header = await asyncio.wait_for(stdout.readexactly(FRAME_HEADER.size), READ_IDLE_SECONDS * 2)
    (length,) = FRAME_HEADER.unpack(header)
    return pickle.loads(await stdout.readexactly(length))


async def read_log_elsewhere(
    nats_url: str, log: LogNames, *, until: int, chunk: int
) -> AsyncGenerator[list[StoredMessage]]:
    """The same chunks as :func:`read_log`, read by a second process (module docstring)."""
    reader = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cardtable.scoring_service.log_reading",
        log.prefix,
        str(until),
        str(chunk),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "NATS_URL": nats_url},
    )
    assert reader.stdout is not None
    try:
        while True:
            try:
                item = await _receive(reader.stdout)
            except asyncio.IncompleteReadError:
                raise RuntimeError("the log reader exited without finishing") from None
            except TimeoutError:
                raise TimeoutError(
                    f"the log reader sent nothing for {READ_IDLE_SECONDS * 2:g}s"
                ) from None
            if item is None:
                return
            if isinstance(item, str):
                raise RuntimeError(item)
            yield list(map(StoredMessage._make, item))  # type: ignore[call-overload]
    finally:
        if reader.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                reader.kill()
        await reader.wait()


if __name__ == "__main__":
    sys.exit(main())
