"""``TableService.Pipeline``: many players' CreateTable, JoinTable, GetTable and MakeMove
calls over one stream.

A backend that serves many players (a game front end, a bot fleet) would otherwise make one
unary call per request. In grpc.aio each call costs far more CPU than the work behind it: its
own HTTP/2 stream, headers and trailers, the interceptors, and the trips between gRPC's poller
thread and the event loop, on both sides. Each unary call also leaves a reference cycle in
the server (its handler call details and the closure that found its handler), which only the
garbage collector frees: under load, a game's five unary calls to open a table and take its
seats made nearly all the garbage the table service's collections found
(docs/proving-it.md#settings-the-figures-chose).
Over one open stream a call costs a share of a message, and the calls or replies that wait at
the same moment share one.

Each call is answered by the servicer's own unary method, given a context that carries the
call's token: the same checks, the same answer, the same status on failure. The calls run
concurrently, as unary calls would, and their replies go out as each one finishes: unlike
calls (``platform/pipeline_client.Linger``), replies do not linger for company: holding them
back cost more latency than it saved CPU, since the players' next calls wait for them
(docs/proving-it.md#settings-the-figures-chose). Ending the
stream cancels the calls still running, as a cancelled unary call would; commands are
idempotent by their command id, so a client retries a MakeMove whose reply it never saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn

import grpc

from cardtable.platform.grpc_server import bounded_details
from cardtable.platform.logging import get_logger
from cardtable_api.table.v1 import table_pb2

_log = get_logger(__name__)
#: Calls one stream may have running at once; while that many run, the stream's next message
#: is not read, so HTTP/2 flow control slows the client down instead of memory growing.
MAX_CALLS_IN_FLIGHT = 1024
#: A reply message holds replies up to about this many bytes (a client refuses messages over
#: 4 MiB by default); more go in the next message.
MESSAGE_BYTES = 1024 * 1024

Context = grpc.aio.ServicerContext[Any, Any]
#: A unary method of the servicer: (request, context) -> reply.
UnaryMethod = Callable[[Any, Any], Awaitable[Any]]


class CallAbortedError(Exception):
    """A pipelined call ended with a status, as ``context.abort`` ends a unary call."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class CallContext:
    """The part of a servicer context a unary handler uses, for one pipelined call."""

    __slots__ = ("_metadata", "retry_after_ms")

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata
        self.retry_after_ms = 0

    def set_trailing_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
        """A pipelined reply has no trailing metadata: a quota's ``retry-after-ms`` travels in
        its ``CallFailed`` instead, so a pipelined caller can wait as a unary one does."""
        for key, value in metadata:
            if key == "retry-after-ms" and value.isdigit():
                self.retry_after_ms = int(value)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        raise CallAbortedError(code, details)


def call_metadata(
    stream_metadata: tuple[tuple[str, str], ...], token: str
) -> tuple[tuple[str, str], ...]:
    """The stream's metadata (trace context, ...), with the call's own token if it has one."""
    if not token:
        return stream_metadata
    kept = tuple((key, value) for key, value in stream_metadata if key.lower() != "authorization")
    return (*kept, ("authorization", f"Bearer {token}"))


#: A call's answer: its id, the reply's field (``failed`` for a status), and the reply. Copied
#: into the outgoing message only when it is written, so that a view is copied once.
Answer = tuple[int, str, Any]


def _failed(call_id: int, code: grpc.StatusCode, message: str, retry_after_ms: int = 0) -> Answer:
    return (
        call_id,
        "failed",
        table_pb2.CallFailed(
            code=code.value[0], message=bounded_details(message), retry_after_ms=retry_after_ms
        ),
    )


async def answer(
    call: table_pb2.PipelinedCall,
    methods: dict[str, UnaryMethod],
    stream_metadata: tuple[tuple[str, str], ...],
) -> Answer:
    """One call, answered by its unary method; a failure is the status that method gave."""
    field = call.WhichOneof("request")
    if field is None:
        return _failed(
            call.id, grpc.StatusCode.INVALID_ARGUMENT, "a pipelined call needs a request"
        )
    context = CallContext(call_metadata(stream_metadata, call.token))
    try:
        reply = await methods[field](getattr(call, field), context)
    except CallAbortedError as aborted:
        return _failed(call.id, aborted.code, aborted.details, context.retry_after_ms)
    except asyncio.CancelledError:
        raise
    except Exception:
        _log.exception("pipelined call failed", extra={"method": field})
        return _failed(call.id, grpc.StatusCode.INTERNAL, "internal error")
    return call.id, field, reply


def _messages(answers: Sequence[Answer]) -> list[table_pb2.PipelineResponse]:
    """``answers`` in as few messages as fit under :data:`MESSAGE_BYTES` each."""
    messages = [table_pb2.PipelineResponse()]
    size = 0
    for call_id, field, reply in answers:
        reply_size = reply.ByteSize()
        if size and size + reply_size > MESSAGE_BYTES:
            messages.append(table_pb2.PipelineResponse())
            size = 0
        getattr(messages[-1].replies.add(id=call_id), field).CopyFrom(reply)
        size += reply_size
    return messages


async def serve_pipeline(
    requests: AsyncIterator[table_pb2.PipelineRequest],
    context: Context,
    methods: dict[str, UnaryMethod],
) -> AsyncIterator[table_pb2.PipelineResponse]:
    """Run every call of every message as it arrives; send replies as they are ready."""
    stream_metadata = tuple(
        (key, value if isinstance(value, str) else value.decode("latin-1"))
        for key, value in context.invocation_metadata() or ()
    )
    ready: list[Answer] = []
    wakeup = asyncio.Event()
    # The tasks, to cancel them when the stream ends; and their count, kept by the tasks
    # themselves, since a done callback would drop a task only after the writer has looked.
    running: set[asyncio.Task[None]] = set()
    slots = asyncio.Semaphore(MAX_CALLS_IN_FLIGHT)
    in_flight = 0
    reading = True
    failure: Exception | None = None

    async def run(call: table_pb2.PipelinedCall) -> None:
        nonlocal in_flight
        try:
            ready.append(await answer(call, methods, stream_metadata))
        finally:
            in_flight -= 1
            slots.release()
            wakeup.set()

    async def read() -> None:
        nonlocal reading, failure, in_flight
        try:
            async for request in requests:
                for call in request.calls:
                    await slots.acquire()
                    in_flight += 1
                    task = asyncio.create_task(run(call))
                    running.add(task)
                    task.add_done_callback(running.discard)
        except Exception as error:  # an undecodable message: its abort ends the stream
            failure = error
        finally:
            reading = False
            wakeup.set()

    reader = asyncio.create_task(read(), name="table-pipeline-read")
    try:
        while reading or in_flight or ready:
            await wakeup.wait()
            wakeup.clear()
            if failure is not None:
                raise failure
            # Replies that finish while these are written gather for the next message.
            sending = ready[:]
            ready.clear()
            if sending:
                for message in _messages(sending):
                    yield message
    finally:
        reader.cancel()
        for task in running:
            task.cancel()
