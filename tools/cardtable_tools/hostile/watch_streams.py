"""Watch streams held open: what a watch flood opens one at a time and closes together."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

import grpc

from cardtable_api.table.v1 import table_pb2
from cardtable_tools.hostile.calls import TABLE_SERVICE
from cardtable_tools.hostile.scene import Client
from cardtable_tools.hostile.wire import Answer, refused

WATCH_TABLE = f"/{TABLE_SERVICE}/WatchTable"
#: How long a stream may take to send its first message (its table's history).
FIRST_MESSAGE_SECONDS = 10.0


class HeldStreams:
    """``WatchTable`` streams of one table, each open once its first message has come (so
    the server holds it), all cancelled on leaving the ``async with``."""

    def __init__(self, channel: grpc.aio.Channel, table_id: str) -> None:
        self._channel = channel
        self._table_id = table_id
        self._calls: list[Any] = []

    async def __aenter__(self) -> HeldStreams:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for call in self._calls:
            call.cancel()
        self._calls.clear()

    async def open(self, watcher: Client | None) -> Answer:
        """One more stream, with ``watcher``'s token (None: without one); OK once it is open
        and held, else how it was refused."""
        request = table_pb2.WatchTableRequest(table_id=self._table_id)
        call = self._channel.unary_stream(WATCH_TABLE, None, None)(
            request.SerializeToString(), metadata=watcher.metadata if watcher else ()
        )
        try:
            first = await asyncio.wait_for(call.read(), FIRST_MESSAGE_SECONDS)
        except grpc.aio.AioRpcError as error:
            return refused(error)
        except TimeoutError:
            call.cancel()
            return Answer(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"no first message in {FIRST_MESSAGE_SECONDS:g} s",
            )
        if not isinstance(first, bytes):  # grpc.aio.EOF: ended without a message
            return Answer(await call.code(), await call.details())
        self._calls.append(call)
        return Answer(grpc.StatusCode.OK)
