"""Request bytes that do not decode are the caller's mistake: INVALID_ARGUMENT, not UNKNOWN.

grpc.aio decodes a unary request before any servicer code runs. When protobuf raises
``DecodeError`` there, grpc answers UNKNOWN ("Unexpected DecodeError ..."), which tells the
client the server failed and makes retry policies and alerts treat garbage as an outage. This
interceptor decodes leniently into a marker and lets the handler refuse the marker with
INVALID_ARGUMENT, so a corrupt request is answered like any other malformed one.

A bidirectional stream's messages decode one by one as the handler iterates over them; there
the first undecodable one ends the stream with INVALID_ARGUMENT. (No cardtable method takes a
client stream with a single reply, so those are left alone.)
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.message import DecodeError

if TYPE_CHECKING:  # grpc-stubs makes these generic; at run time they are plain classes
    _ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
    _Handler = grpc.RpcMethodHandler[Any, Any]
else:
    _ServerInterceptor = grpc.aio.ServerInterceptor
    _Handler = grpc.RpcMethodHandler

Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True)
class Undecodable:
    """What a request decodes to when its bytes are not a valid message of its type."""

    reason: str


def _lenient(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as error:
            return Undecodable(str(error))

    return decode


async def _refuse(request: Undecodable, context: Context) -> None:
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a valid message: {request.reason}"
    )


class RequestDecodingInterceptor(_ServerInterceptor):
    """Answers INVALID_ARGUMENT for undecodable unary requests (see the module doc)."""

    def __init__(self) -> None:
        # Interceptors run on every call: wrap each method's handler once, not per request.
        self._wrapped: dict[int, tuple[_Handler, _Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _Handler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        if handler.request_streaming and not handler.response_streaming:
            return handler
        cached = self._wrapped.get(id(handler))
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped_handler = self._wrap(handler)
        self._wrapped[id(handler)] = (handler, wrapped_handler)
        return wrapped_handler

    @staticmethod
    def _wrap(handler: _Handler) -> _Handler:
        if handler.request_streaming:
            kind = "stream_stream"
        else:
            kind = "unary_stream" if handler.response_streaming else "unary_unary"
        behavior = getattr(handler, kind)
        if kind == "stream_stream":
            if not inspect.isasyncgenfunction(behavior):
                return handler  # one that reads and writes by hand: left as it is
            wrapped: Callable[..., Any] = _guard_request_stream(behavior)
        elif inspect.isasyncgenfunction(behavior):
            wrapped = _guard_generator(behavior)
        elif inspect.iscoroutinefunction(behavior):
            wrapped = _guard_coroutine(behavior)
        else:  # a synchronous handler: leave it alone rather than guess how it is driven
            return handler
        factory = getattr(grpc, f"{kind}_rpc_method_handler")
        deserializer = handler.request_deserializer
        assert deserializer is not None  # checked by intercept_service
        return factory(  # type: ignore[no-any-return]
            wrapped,
            request_deserializer=_lenient(deserializer),
            response_serializer=handler.response_serializer,
        )


def _guard_coroutine(behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def guarded(request: Any, context: Context) -> Any:
        if isinstance(request, Undecodable):
            await _refuse(request, context)
        return await behavior(request, context)

    return guarded


def _guard_request_stream(behavior: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
    async def guarded(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
        async def decoded() -> AsyncIterator[Any]:
            async for request in requests:
                if isinstance(request, Undecodable):
                    await _refuse(request, context)
                yield request

        async for response in behavior(decoded(), context):
            yield response

    return guarded


def _guard_generator(behavior: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
    async def guarded(request: Any, context: Context) -> AsyncIterator[Any]:
        if isinstance(request, Undecodable):
            await _refuse(request, context)
        async for response in behavior(request, context):
            yield response

    return guarded
