"""The table service's seat requests, as they are published on core NATS.

The table service publishes ``Event(bot_seat_requested=...)`` on ``{prefix}.bots.requests``
with a ``Table-Id`` header after each batch that hands seats to computer players. Replicas
listen in one queue group, so each request reaches one of them; a request that reaches none
(no replica running) is found by the next scan of running tables, and one that reaches a full
replica waits there for room (see ``supervisor``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from google.protobuf.message import DecodeError
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from cardtable.platform.logging import get_logger
from cardtable_api.events.v1 import events_pb2

_log = get_logger(__name__)

RequestHandler = Callable[[str, events_pb2.BotSeatRequested], Coroutine[Any, Any, None]]


def parse_request(message: Msg) -> tuple[str, events_pb2.BotSeatRequested] | None:
    """The table id and the request a message carries, or None when it is not one."""
    table_id = (message.headers or {}).get("Table-Id", "")
    try:
        event = events_pb2.Event.FromString(message.data)
    except DecodeError:
        return None
    if not table_id or not event.HasField("bot_seat_requested"):
        return None
    return table_id, event.bot_seat_requested


class SeatRequests:
    """A subscription that hands each seat request to ``handle`` in its own task."""

    def __init__(
        self, nats: NatsClient, subject: str, queue_group: str, handle: RequestHandler
    ) -> None:
        self._nats = nats
        self._subject = subject
        self._queue = queue_group
        self._handle = handle
        self._subscription: Subscription | None = None
        self._handling: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._subscription = await self._nats.subscribe(
            self._subject, queue=self._queue, cb=self._on_message
        )

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):  # the connection may be closing already
                await self._subscription.unsubscribe()
            self._subscription = None
        for task in list(self._handling):
            task.cancel()
        for task in list(self._handling):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _on_message(self, message: Msg) -> None:
        parsed = parse_request(message)
        if parsed is None:
            _log.warning("not a seat request", extra={"subject": message.subject})
            return
        # The callback must return quickly: nats-py delivers a subscription's messages one
        # after the other, and a claim waits for a round trip to JetStream.
        task = asyncio.create_task(self._handle(*parsed))
        self._handling.add(task)
        task.add_done_callback(self._handled)

    def _handled(self, task: asyncio.Task[None]) -> None:
        self._handling.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("seat request failed", exc_info=task.exception())
