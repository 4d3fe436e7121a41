"""The client end of a ``Pipeline`` stream: many calls over one long-lived bidi stream.

Both the rules service and the table service offer ``Pipeline``: a stream whose request
messages carry calls (``calls``, each with an ``id`` and one request field) and whose reply
messages carry replies (``replies``, each with that ``id`` and the answer, or ``failed`` with
the status the unary method would have given). In grpc.aio a unary call costs much more CPU
than a message; over one stream, the calls that wait at the same moment share a message.

:class:`PipelineStream` is one open stream: a writer task sends what waits, a reader task
hands each reply to its caller. When calls come often, the writer first waits
``linger_seconds`` for more to share the message (as Kafka's producers linger;
:class:`Linger`). Below saturation calls rarely wait at the same moment, so without it nearly
every call is a message of its own, and each message costs grpc.aio far more CPU on both sides
than the call in it: near the target load, a linger of a millisecond on the players' stream
and on the rules service's lowers the CPU per move, and with it the tail latency
(docs/proving-it.md#settings-the-figures-chose). A stream whose calls come seldom (one
player, a test playing one move at a time) has no company to wait for, and does not linger.

When the stream breaks, every call in flight fails with the error ``failure`` makes of the
status, and the stream is done: the owner opens a new one for the next call. A call with no
reply within its timeout fails as DEADLINE_EXCEEDED.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
from collections.abc import Callable
from typing import Any

import grpc

from cardtable.platform.logging import get_logger

_log = get_logger(__name__)
#: A message holds calls up to about this many bytes (servers refuse more than 4 MiB in one
#: message, and one call may be large): more calls go in the next message.
MESSAGE_BYTES = 1024 * 1024
STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
#: Makes the exception a caller sees from a status: (code, details) -> exception.
Failure = Callable[[grpc.StatusCode, str], Exception]
#: The linger of the streams this project opens for its own hot calls (module doc).
DEFAULT_LINGER_SECONDS = 0.001
#: Linger only when at least this many more calls are expected within the linger.
EXPECTED_COMPANY = 0.5
#: How much each new gap between calls moves their running mean.
GAP_WEIGHT = 0.1
#: Gaps are counted up to this long, so one long pause is soon forgotten.
LONGEST_GAP_SECONDS = 1.0


class Linger:
    """Holds a message back for company, when calls come often enough to expect some.

    It keeps a running mean of the gaps between the calls a stream has to send.
    While ``seconds`` would bring at least :data:`EXPECTED_COMPANY` more, a message waits that
    long before it goes; otherwise it goes at once. So a stream that many tables' calls share
    lingers, and one that a single player (or a test playing one move at a time) uses does not
    pay for company that is not coming.
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._last: float | None = None
        self._mean_gap = math.inf

    def arrived(self) -> None:
        """A call is waiting to be sent: count its gap since the one before."""
        now = self._clock()
        if self._last is not None:
            gap = min(now - self._last, LONGEST_GAP_SECONDS)
            if math.isinf(self._mean_gap):
                self._mean_gap = gap
            else:
                self._mean_gap += GAP_WEIGHT * (gap - self._mean_gap)
        self._last = now

    @property
    def worth_it(self) -> bool:
        """Whether waiting ``seconds`` should bring company."""
        return self.seconds > 0 and self.seconds >= EXPECTED_COMPANY * self._mean_gap

    async def before_message(self) -> None:
        """Wait for company if it is worth it; the message goes out right after."""
        if self.worth_it:
            await asyncio.sleep(self.seconds)


def failed_status(reply: Any) -> tuple[grpc.StatusCode, str] | None:
    """The status of a reply whose call failed (its ``failed`` field), else None."""
    if not reply.HasField("failed"):
        return None
    return STATUS_CODES.get(reply.failed.code, grpc.StatusCode.UNKNOWN), reply.failed.message


class PipelineStream:
    """One open ``Pipeline`` stream (see the module doc)."""

    def __init__(
        self,
        call: Any,
        request_type: Callable[[], Any],
        timeout_seconds: float,
        failure: Failure,
        name: str,
        linger_seconds: float = 0.0,
    ) -> None:
        self._call = call
        self._linger = Linger(linger_seconds)
        self._request_type = request_type
        self._timeout = timeout_seconds
        self._failure = failure
        self._name = name
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        # Messages waiting to be written, each kept under MESSAGE_BYTES; the last one fills.
        self._outbox: list[Any] = []
        self._outbox_bytes = 0
        self._wakeup = asyncio.Event()
        self.broken = False
        self._tasks = (
            asyncio.create_task(self._write(), name=f"{name}-pipeline-write"),
            asyncio.create_task(self._read(), name=f"{name}-pipeline-read"),
        )

    async def ask(self, field: str, request: Any, **call_fields: Any) -> Any:
        """Send ``request`` as the call's ``field`` and wait for its reply message."""
        if self.broken:
            raise self._failure(grpc.StatusCode.UNAVAILABLE, "the pipeline is closed")
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        size = request.ByteSize()
        if not self._outbox or self._outbox_bytes + size > MESSAGE_BYTES:
            self._outbox.append(self._request_type())
            self._outbox_bytes = 0
        call = self._outbox[-1].calls.add(id=call_id, **call_fields)
        getattr(call, field).CopyFrom(request)
        self._outbox_bytes += size
        self._linger.arrived()
        self._wakeup.set()
        try:
            async with asyncio.timeout(self._timeout):
                return await future
        except TimeoutError:
            raise self._failure(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no answer within {self._timeout:g}s"
            ) from None
        finally:
            self._waiting.pop(call_id, None)

    async def _write(self) -> None:
        try:
            while not self.broken:
                await self._wakeup.wait()
                await self._linger.before_message()  # calls asked meanwhile share it
                self._wakeup.clear()
                # Calls asked while these writes are on their way gather in the next message.
                sending, self._outbox = self._outbox, []
                for message in sending:
                    await self._call.write(message)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._break(error)

    async def _read(self) -> None:
        try:
            async for response in self._call:
                for reply in response.replies:
                    future = self._waiting.get(reply.id)
                    if future is not None and not future.done():
                        future.set_result(reply)
            self._break(ConnectionError(f"the server ended the {self._name} pipeline"))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._break(error)

    def _break(self, error: Exception) -> None:
        """Fail every call in flight; the owner opens a new stream for the next call."""
        if self.broken:
            return
        self.broken = True
        # The calls in flight were fine: whatever ended the stream, they could not be answered.
        if isinstance(error, grpc.aio.AioRpcError):
            failure = self._failure(error.code(), error.details() or "")
        else:
            failure = self._failure(grpc.StatusCode.UNAVAILABLE, f"pipeline broke: {error!r}")
        _log.warning(f"{self._name} pipeline broke", extra={"error": repr(error)})
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(failure)
        self._waiting.clear()
        self._call.cancel()
        self._wakeup.set()  # lets the writer see it is broken and end

    async def close(self) -> None:
        self.broken = True
        self._call.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
