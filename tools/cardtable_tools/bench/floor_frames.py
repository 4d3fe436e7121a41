"""Calls multiplexed over one bidi gRPC stream of raw bytes, for the move floor.

A message is a run of frames, each ``call id (4 bytes) | length (4 bytes) | payload``. As in
the services' ``Pipeline`` streams (``platform/pipeline_client.py``), the calls that wait at
the same moment share one message, so the floor batches exactly where the system does and is
not made slower than the system by a transport the system does not use.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import struct
from collections.abc import AsyncIterator, Iterable, Iterator

import grpc

FRAME_HEADER = struct.Struct(">II")


def pack(frames: Iterable[tuple[int, bytes]]) -> bytes:
    """One message holding ``frames`` (call id, payload) in order."""
    return b"".join(FRAME_HEADER.pack(call_id, len(body)) + body for call_id, body in frames)


def unpack(message: bytes) -> Iterator[tuple[int, bytes]]:
    """The (call id, payload) frames of one message."""
    offset = 0
    while offset < len(message):
        call_id, length = FRAME_HEADER.unpack_from(message, offset)
        offset += FRAME_HEADER.size
        yield call_id, message[offset : offset + length]
        offset += length


class Outbox:
    """Frames waiting to be written: the writer takes all that wait as one message."""

    def __init__(self) -> None:
        self._frames: list[tuple[int, bytes]] = []
        self._ready = asyncio.Event()

    def put(self, call_id: int, body: bytes) -> None:
        self._frames.append((call_id, body))
        self._ready.set()

    async def messages(self) -> AsyncIterator[bytes]:
        """The stream's messages, as long as the stream lasts."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            frames, self._frames = self._frames, []
            yield pack(frames)


class FramedCaller:
    """The calling end of one stream: ``await caller(payload)`` is one call's reply payload."""

    def __init__(self, channel: grpc.aio.Channel, method: str) -> None:
        self._outbox = Outbox()
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        stream = channel.stream_stream(method, request_serializer=None, response_deserializer=None)
        self._call = stream(self._outbox.messages())
        self._reader = asyncio.create_task(self._read(), name=f"floor-read {method}")

    async def __call__(self, body: bytes) -> bytes:
        call_id = next(self._ids)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        self._outbox.put(call_id, body)
        return await future

    async def _read(self) -> None:
        try:
            async for message in self._call:
                for call_id, body in unpack(message):
                    self._waiting.pop(call_id).set_result(body)
        except grpc.aio.AioRpcError as error:  # the stream broke: no call in flight can end
            for future in self._waiting.values():
                future.set_exception(error)

    async def close(self) -> None:
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
