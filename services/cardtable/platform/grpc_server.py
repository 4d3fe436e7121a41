"""Start and stop a grpc.aio server the way every cardtable service needs it.

Each server gets the standard health service (Kubernetes probes it natively over gRPC), server
reflection (so ``cardtable call`` and grpcurl work without .proto files), the Prometheus
interceptor and a bounded receive size. Shutdown is graceful: health turns NOT_SERVING first so
that load balancers stop sending new calls, then in-flight calls get ``grace`` seconds to finish.

Two levels:

* ``serve(settings, services)`` is what a service's ``main.py`` awaits: it also serves
  ``/metrics`` and returns after SIGTERM/SIGINT once everything is stopped;
* ``start_server(...)`` returns a ``RunningServer`` for tests that run a server in-process.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]  # no stub
from grpc_reflection.v1alpha import reflection
from prometheus_client import CollectorRegistry

from cardtable.platform.logging import BoundLogger, get_logger
from cardtable.platform.memory import tune_garbage_collector
from cardtable.platform.metrics import (
    GrpcServerMetrics,
    MetricsInterceptor,
    new_registry,
    start_metrics_endpoint,
)
from cardtable.platform.request_decoding import RequestDecodingInterceptor
from cardtable.platform.settings import ServerSettings

HEALTH_SERVICE_NAME = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
OVERALL_HEALTH = ""  # the name Kubernetes' grpc probe asks about when no service is given
DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024
#: Status details travel in a header, and clients refuse headers over 16 KiB (non-ASCII text
#: is percent-encoded, up to 12 bytes a character): a message that quotes a huge input is cut.
MAX_STATUS_DETAILS_CHARS = 500


def bounded_details(message: str) -> str:
    """``message`` cut to a length every client accepts as status details."""
    if len(message) <= MAX_STATUS_DETAILS_CHARS:
        return message
    return message[: MAX_STATUS_DETAILS_CHARS - 3] + "..."


@dataclass(frozen=True)
class Service:
    """One servicer and the generated function that adds it to a server.

    ``name`` is the full protobuf name (``cardtable.rules.v1.RulesService``): health status and
    reflection are keyed by it. For a generated service::

        Service(
            name=rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,
            servicer=RulesServicer(...),
            add_to_server=rules_pb2_grpc.add_RulesServiceServicer_to_server,
        )
    """

    name: str
    servicer: object
    add_to_server: Callable[[Any, grpc.aio.Server], None]


@dataclass
class RunningServer:
    """A started server, the port it bound, and its health state."""

    server: grpc.aio.Server
    port: int
    health: Any  # grpc_health.v1.health.aio.HealthServicer, which has no type stubs
    service_names: tuple[str, ...]
    _stopped: bool = field(default=False, init=False)

    async def set_serving(self, service_name: str, serving: bool) -> None:
        """Report one service (or ``OVERALL_HEALTH``) as able to take calls, or not.

        A servicer that loses a dependency it cannot work without (the event store, say) can
        turn itself NOT_SERVING until it recovers, instead of failing every call.
        """
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set(service_name, status)

    async def stop(self, grace: float | None, *, drain_seconds: float = 0.0) -> None:
        """Stop gracefully; calling it again does nothing.

        ``drain_seconds`` keeps answering while already NOT_SERVING, giving readiness probes
        time to notice before new calls are refused. ``grace`` then bounds how long in-flight
        calls may run before they are cancelled (``None`` cancels them at once).
        """
        if self._stopped:
            return
        self._stopped = True
        await self.health.enter_graceful_shutdown()
        if drain_seconds > 0:
            await asyncio.sleep(drain_seconds)
        await self.server.stop(grace)


async def start_server(
    services: Sequence[Service],
    *,
    port: int = 0,
    host: str = "[::]",
    registry: CollectorRegistry | None = None,
    max_receive_message_bytes: int = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    reflection_enabled: bool = True,
) -> RunningServer:
    """Build, bind and start a server with health, reflection and metrics.

    ``port=0`` binds a free port, returned as ``RunningServer.port``. Metrics go to
    ``registry``; a throw-away registry is used when none is given, so that tests which do not
    look at metrics need not create one.
    """
    metrics = GrpcServerMetrics(registry if registry is not None else CollectorRegistry())
    server = grpc.aio.server(
        interceptors=[MetricsInterceptor(metrics), RequestDecodingInterceptor()],
        options=[
            ("grpc.max_receive_message_length", max_receive_message_bytes),
            # Reusing a port that another process still holds would hide a misconfiguration.
            ("grpc.so_reuseport", 0),
        ],
    )
    for service in services:
        service.add_to_server(service.servicer, server)

    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    names = tuple(service.name for service in services)
    if reflection_enabled:
        reflection.enable_server_reflection(
            (*names, HEALTH_SERVICE_NAME, reflection.SERVICE_NAME), server
        )

    bound_port = server.add_insecure_port(f"{host}:{port}")
    if bound_port == 0:
        raise OSError(f"could not bind gRPC server to {host}:{port}")
    await server.start()
    running = RunningServer(server=server, port=bound_port, health=health, service_names=names)
    for name in (OVERALL_HEALTH, *names):
        await running.set_serving(name, True)
    return running


def _install_signal_handlers(stop_requested: asyncio.Event) -> Callable[[], None]:
    """Turn SIGTERM (Kubernetes) and SIGINT (Ctrl-C) into ``stop_requested``.

    Returns a function that restores the previous behaviour, so that a second Ctrl-C during a
    slow shutdown still kills the process the usual way.
    """
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        loop.add_signal_handler(signum, stop_requested.set)

    def restore() -> None:
        for signum in signals:
            loop.remove_signal_handler(signum)

    return restore


async def serve(
    settings: ServerSettings,
    services: Sequence[Service],
    *,
    registry: CollectorRegistry | None = None,
    stop_requested: asyncio.Event | None = None,
    handle_signals: bool = True,
    on_started: Callable[[RunningServer], None] | None = None,
    logger: BoundLogger | None = None,
) -> None:
    """Run a service until SIGTERM/SIGINT (or ``stop_requested``), then stop it gracefully.

    A ``main.py`` builds its settings, connections and servicers, awaits this, and closes its
    connections after it returns: in-flight calls have finished by then, so nothing still
    needs them. ``on_started`` sees the running server, e.g. to learn a port bound with 0.
    """
    log = logger or get_logger(__name__)
    stop_requested = stop_requested or asyncio.Event()
    registry = registry if registry is not None else new_registry()
    endpoint = start_metrics_endpoint(
        registry, settings.metrics_port, settings.listen_host or "0.0.0.0"
    )
    restore_signals = _install_signal_handlers(stop_requested) if handle_signals else None
    try:
        running = await start_server(
            services,
            port=settings.grpc_port,
            host=settings.listen_host or "[::]",
            registry=registry,
            max_receive_message_bytes=settings.max_receive_message_bytes,
        )
        log.info(
            "grpc server started",
            extra={
                "grpc_port": running.port,
                "metrics_port": endpoint.port,
                "services": list(running.service_names),
            },
        )
        if on_started is not None:
            on_started(running)
        frozen = tune_garbage_collector()
        log.debug("garbage collector tuned", extra={"frozen_objects": frozen})
        try:
            await stop_requested.wait()
            log.info(
                "grpc server stopping", extra={"grace_seconds": settings.shutdown_grace_seconds}
            )
        finally:
            await running.stop(
                settings.shutdown_grace_seconds, drain_seconds=settings.shutdown_drain_seconds
            )
        log.info("grpc server stopped")
    finally:
        if restore_signals is not None:
            restore_signals()
        endpoint.close()
