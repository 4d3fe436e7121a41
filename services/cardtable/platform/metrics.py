"""Prometheus metrics: an HTTP endpoint to scrape and a grpc.aio interceptor that feeds it.

Everything takes a ``CollectorRegistry`` instead of using prometheus-client's global one, so two
servers started in the same process (as tests do) keep separate counts and never raise
"Duplicated timeseries".

Metric names follow go-grpc-prometheus, so existing dashboards and alerts work unchanged:

* ``grpc_server_started_total{grpc_service, grpc_method, grpc_type}``: requests received;
* ``grpc_server_handled_total{..., grpc_code}``: requests finished, by status code; errors are
  the series whose ``grpc_code`` is not ``OK``;
* ``grpc_server_handling_seconds{grpc_service, grpc_method, grpc_type}``: a latency histogram
  (for a streaming call, the life of the whole stream).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
    start_http_server,
)

if TYPE_CHECKING:
    _ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
    _Handler = grpc.RpcMethodHandler[Any, Any]
else:  # the runtime classes are not generic
    _ServerInterceptor = grpc.aio.ServerInterceptor
    _Handler = grpc.RpcMethodHandler

# Card-game RPCs are short; the long tail matters more than sub-millisecond detail.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def new_registry(*, process_metrics: bool = True) -> CollectorRegistry:
    """A fresh registry, with the process/GC/platform collectors a production scrape expects.

    The default collectors are stateless readers of ``/proc`` and ``gc``, so registering the
    same objects in several registries is safe.
    """
    registry = CollectorRegistry()
    if process_metrics:
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            registry.register(collector)
    return registry


@dataclass(frozen=True)
class RpcLabels:
    """The labels that identify one RPC method in every metric."""

    service: str
    method: str
    rpc_type: str

    @classmethod
    def of(cls, full_method: str, handler: _Handler) -> RpcLabels:
        """Split ``/package.Service/Method`` and name the streaming shape as Go's library does."""
        service, _, method = full_method.lstrip("/").rpartition("/")
        shapes = {
            (False, False): "unary",
            (False, True): "server_stream",
            (True, False): "client_stream",
            (True, True): "bidi_stream",
        }
        return cls(service, method, shapes[(handler.request_streaming, handler.response_streaming)])


class GrpcServerMetrics:
    """The three gRPC server metrics, registered in one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["grpc_service", "grpc_method", "grpc_type"]
        self.started = Counter(
            "grpc_server_started_total",
            "RPCs started on the server.",
            labels,
            registry=registry,
        )
        self.handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed on the server, by status code (errors: grpc_code != OK).",
            [*labels, "grpc_code"],
            registry=registry,
        )
        self.handling_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from receiving an RPC to sending its status.",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def record_start(self, rpc: RpcLabels) -> float:
        """Count a started RPC and return the clock reading to measure it from."""
        self.started.labels(rpc.service, rpc.method, rpc.rpc_type).inc()
        return time.perf_counter()

    def record_end(self, rpc: RpcLabels, code: grpc.StatusCode, started_at: float) -> None:
        """Count the finished RPC under its status code and observe its latency."""
        self.handled.labels(rpc.service, rpc.method, rpc.rpc_type, code.name).inc()
        self.handling_seconds.labels(rpc.service, rpc.method, rpc.rpc_type).observe(
            time.perf_counter() - started_at
        )


def _status_of(
    context: grpc.aio.ServicerContext[Any, Any], error: BaseException | None
) -> grpc.StatusCode:
    """The code the client will see: one set via ``abort``/``set_code``, else what grpc derives."""
    if isinstance(error, asyncio.CancelledError):
        return grpc.StatusCode.CANCELLED
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    return grpc.StatusCode.OK if error is None else grpc.StatusCode.UNKNOWN


class MetricsInterceptor(_ServerInterceptor):
    """Counts and times every RPC of a grpc.aio server.

    grpc.aio picks how to drive a handler from its function kind (a coroutine function for unary
    replies or ``context.write`` streams, an async generator function for ``yield`` streams), so
    each wrapper below keeps the kind of the function it wraps.
    """

    def __init__(self, metrics: GrpcServerMetrics) -> None:
        self._metrics = metrics

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _Handler:
        """Wrap the handler grpc found for this method; unknown methods pass through untouched."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        rpc = RpcLabels.of(handler_call_details.method, handler)
        kind = "_".join(
            ("stream" if streaming else "unary")
            for streaming in (handler.request_streaming, handler.response_streaming)
        )
        behavior = getattr(handler, kind)
        if inspect.iscoroutinefunction(behavior):
            wrapped: Callable[..., Any] = self._wrap_coroutine(behavior, rpc)
        elif inspect.isasyncgenfunction(behavior):
            wrapped = self._wrap_async_generator(behavior, rpc)
        else:  # a synchronous handler run in a thread pool: leave it alone rather than guess
            return handler
        factory = getattr(grpc, f"{kind}_rpc_method_handler")
        return factory(  # type: ignore[no-any-return]
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _wrap_coroutine(
        self, behavior: Callable[..., Awaitable[Any]], rpc: RpcLabels
    ) -> Callable[..., Awaitable[Any]]:
        metrics = self._metrics

        async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started_at = metrics.record_start(rpc)
            error: BaseException | None = None
            try:
                return await behavior(request, context)
            except BaseException as caught:
                error = caught
                raise
            finally:
                metrics.record_end(rpc, _status_of(context, error), started_at)

        return observed

    def _wrap_async_generator(
        self, behavior: Callable[..., AsyncIterator[Any]], rpc: RpcLabels
    ) -> Callable[..., AsyncIterator[Any]]:
        metrics = self._metrics

        async def observed(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started_at = metrics.record_start(rpc)
            error: BaseException | None = None
            try:
                async for response in behavior(request, context):
                    yield response
            except BaseException as caught:
                error = caught
                raise
            finally:
                metrics.record_end(rpc, _status_of(context, error), started_at)

        return observed


@dataclass
class MetricsEndpoint:
    """A running ``/metrics`` HTTP server; ``close`` frees its port and thread."""

    port: int
    _server: WSGIServer
    _thread: threading.Thread

    def close(self) -> None:
        """Stop serving and wait for the server thread, so the port is free when this returns."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def start_metrics_endpoint(
    registry: CollectorRegistry, port: int, host: str = "0.0.0.0"
) -> MetricsEndpoint:
    """Serve ``registry`` over HTTP on ``port`` (0 picks a free one) from a daemon thread.

    A thread rather than the event loop because scrapes must be answered even when the loop is
    busy or stuck; that is when the metrics matter most.
    """
    server, thread = start_http_server(port, addr=host, registry=registry)
    return MetricsEndpoint(port=server.server_port, _server=server, _thread=thread)
