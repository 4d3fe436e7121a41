"""The two servers of the move floor, each in its own process as the services are.

``rules`` answers each message of a stream with the message itself: a rules question that
costs nothing to answer. ``table`` plays the table service's part with nothing of ours: a
view call (``V``) is answered at once, as from a cache; a move call (``M``) asks the ``rules``
server, appends the answer to the table's own subject with the expected-sequence header the
event store uses, waits for JetStream's acknowledgement and replies. No protobuf, tokens,
engine, logs or metrics. ``move_floor`` runs them:

    python -m cardtable_tools.bench.floor_servers PORT rules
    python -m cardtable_tools.bench.floor_servers PORT table RULES_ADDRESS NATS_URL SUBJECT_PREFIX
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator

import grpc
import nats
from nats.js import JetStreamContext, api

from cardtable.platform.entrypoint import run_async
from cardtable_tools.bench.floor_frames import FramedCaller, Outbox, unpack

SERVICE = "cardtable_tools.bench.Floor"
RULES_METHOD = f"/{SERVICE}/Rules"
TABLE_METHOD = f"/{SERVICE}/Table"
#: A call's first byte says what it is; the next TABLE_KEY_BYTES name its table.
VIEW, MOVE = b"V", b"M"
TABLE_KEY_BYTES = 8
#: A reply's first byte: the call was answered, or failed (the rest says why).
ANSWERED, FAILED = b"+", b"!"


def _same(payload: bytes) -> bytes:
    return payload


def work(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU (not of the wall clock: stolen time is no work)."""
    if seconds <= 0:
        return
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


class FloorRules:
    """The rules server: every question answered with itself, after its work."""

    def __init__(self, work_seconds: float) -> None:
        self._work_seconds = work_seconds

    async def serve_stream(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        async for message in requests:
            if self._work_seconds:
                work(self._work_seconds * sum(1 for _ in unpack(message)))
            yield message


class FloorTable:
    """The table server's calls: one stream per client connection."""

    def __init__(
        self, rules: FramedCaller, jetstream: JetStreamContext, prefix: str, work_seconds: float
    ) -> None:
        self._rules = rules
        self._work_seconds = work_seconds
        self._jetstream = jetstream
        self._prefix = prefix
        #: Each table's last stream sequence, as the event store's cache keeps it.
        self._last_sequence: dict[bytes, int] = {}
        self._answering: set[asyncio.Task[None]] = set()

    async def serve_stream(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        outbox = Outbox()
        reader = asyncio.create_task(self._read(requests, outbox))
        try:
            async for message in outbox.messages():
                yield message
        finally:
            reader.cancel()

    async def _read(self, requests: AsyncIterator[bytes], outbox: Outbox) -> None:
        async for message in requests:
            for call_id, body in unpack(message):
                task = asyncio.create_task(self._answer(call_id, body, outbox))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)

    async def _answer(self, call_id: int, body: bytes, outbox: Outbox) -> None:
        work(self._work_seconds)
        if body[:1] != MOVE:
            outbox.put(call_id, ANSWERED + body)
            return
        table = body[1 : 1 + TABLE_KEY_BYTES]
        expected = str(self._last_sequence.get(table, 0))
        try:
            events = await self._rules(body)
            ack = await self._jetstream.publish(
                f"{self._prefix}.{table.hex()}",
                events,
                headers={api.Header.EXPECTED_LAST_SUBJECT_SEQUENCE: expected},
            )
        except Exception as error:  # a bench must report a failure, not hang its client
            outbox.put(call_id, FAILED + repr(error).encode())
            return
        self._last_sequence[table] = ack.seq
        outbox.put(call_id, ANSWERED + ack.seq.to_bytes(8, "big"))


async def _serve(port: int, handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]]) -> None:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


async def serve_rules(port: int, work_seconds: float) -> None:
    handler = grpc.stream_stream_rpc_method_handler(
        FloorRules(work_seconds).serve_stream, request_deserializer=_same, response_serializer=_same
    )
    await _serve(port, {"Rules": handler})


async def serve_table(
    port: int, work_seconds: float, rules_address: str, nats_url: str, prefix: str
) -> None:
    connection = await nats.connect(nats_url)
    async with grpc.aio.insecure_channel(rules_address) as channel:
        rules = FramedCaller(channel, RULES_METHOD)
        table = FloorTable(rules, connection.jetstream(), prefix, work_seconds)
        handler = grpc.stream_stream_rpc_method_handler(
            table.serve_stream, request_deserializer=_same, response_serializer=_same
        )
        await _serve(port, {"Table": handler})


def main(argv: list[str]) -> None:
    port, role, work_seconds = int(argv[0]), argv[1], float(argv[2]) / 1e6
    if role == "rules":
        run_async(serve_rules(port, work_seconds))
    else:
        run_async(serve_table(port, work_seconds, argv[3], argv[4], argv[5]))


if __name__ == "__main__":
    main(sys.argv[1:])
