"""A grpc.aio server from the bootstrap: health, reflection, metrics and a graceful stop."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import psutil
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import CollectorRegistry, generate_latest

from cardtable.platform.grpc_server import (
    HEALTH_SERVICE_NAME,
    RunningServer,
    Service,
    serve,
    start_server,
)
from cardtable.platform.metrics import start_metrics_endpoint
from cardtable.platform.settings import ServerSettings

ECHO = "test.v1.Echo"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def say(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    return request


async def refuse(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "you must follow hearts")
    raise AssertionError("abort raises")


async def crash(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    raise RuntimeError("bug")


async def count(
    request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]
) -> AsyncIterator[bytes]:
    for number in range(int(request)):
        yield str(number).encode()


async def slow(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    await asyncio.sleep(float(request))
    return b"done"


def echo_service() -> Service:
    """A service without generated code: raw bytes in and out."""
    handler = grpc.method_handlers_generic_handler(
        ECHO,
        {
            "Say": grpc.unary_unary_rpc_method_handler(say),
            "Refuse": grpc.unary_unary_rpc_method_handler(refuse),
            "Crash": grpc.unary_unary_rpc_method_handler(crash),
            "Count": grpc.unary_stream_rpc_method_handler(count),
            "Slow": grpc.unary_unary_rpc_method_handler(slow),
        },
    )
    return Service(
        name=ECHO,
        servicer=None,
        add_to_server=lambda _servicer, server: server.add_generic_rpc_handlers((handler,)),
    )


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def running(registry: CollectorRegistry) -> AsyncIterator[RunningServer]:
    server = await start_server([echo_service()], host="127.0.0.1", registry=registry)
    yield server
    await server.stop(None)


@pytest.fixture
async def channel(running: RunningServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as opened:
        yield opened


async def health_of(channel: grpc.aio.Channel, service: str = "") -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return int(reply.status)


def call(channel: grpc.aio.Channel, method: str) -> Callable[[bytes], Awaitable[bytes]]:
    return channel.unary_unary(f"/{ECHO}/{method}", None, None)


async def test_health_reports_serving_over_a_real_channel(
    running: RunningServer, channel: grpc.aio.Channel
) -> None:
    assert running.port > 0
    assert await health_of(channel) == SERVING
    assert await health_of(channel, ECHO) == SERVING


async def test_health_can_be_turned_off_per_service(
    running: RunningServer, channel: grpc.aio.Channel
) -> None:
    await running.set_serving(ECHO, False)

    assert await health_of(channel, ECHO) == NOT_SERVING
    assert await health_of(channel) == SERVING


async def test_reflection_lists_the_services(channel: grpc.aio.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")

    replies = [reply async for reply in stub.ServerReflectionInfo(iter([request]))]

    listed = {service.name for service in replies[0].list_services_response.service}
    assert listed == {ECHO, HEALTH_SERVICE_NAME, "grpc.reflection.v1alpha.ServerReflection"}


async def test_metrics_count_requests_and_errors_by_method_and_code(
    channel: grpc.aio.Channel, registry: CollectorRegistry
) -> None:
    assert await call(channel, "Say")(b"hi") == b"hi"
    assert await call(channel, "Say")(b"hi") == b"hi"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call(channel, "Refuse")(b"")
    with pytest.raises(grpc.aio.AioRpcError) as crashed:
        await call(channel, "Crash")(b"")
    numbers = [
        message async for message in channel.unary_stream(f"/{ECHO}/Count", None, None)(b"3")
    ]

    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == "you must follow hearts"
    assert crashed.value.code() == grpc.StatusCode.UNKNOWN
    assert numbers == [b"0", b"1", b"2"]

    def handled(method: str, code: str, rpc_type: str = "unary") -> float | None:
        labels = {"grpc_service": ECHO, "grpc_method": method, "grpc_type": rpc_type}
        return registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": code})

    assert handled("Say", "OK") == 2
    assert handled("Refuse", "INVALID_ARGUMENT") == 1
    assert handled("Crash", "UNKNOWN") == 1
    assert handled("Count", "OK", "server_stream") == 1
    say_labels = {"grpc_service": ECHO, "grpc_method": "Say", "grpc_type": "unary"}
    assert registry.get_sample_value("grpc_server_started_total", say_labels) == 2
    assert registry.get_sample_value("grpc_server_handling_seconds_count", say_labels) == 2


async def test_the_metrics_endpoint_serves_the_counts_over_http(
    channel: grpc.aio.Channel, registry: CollectorRegistry
) -> None:
    await call(channel, "Say")(b"hi")
    endpoint = start_metrics_endpoint(registry, port=0, host="127.0.0.1")
    try:
        url = f"http://127.0.0.1:{endpoint.port}/metrics"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    finally:
        endpoint.close()

    expected = (
        'grpc_server_handled_total{grpc_code="OK",grpc_method="Say",'
        f'grpc_service="{ECHO}",grpc_type="unary"}} 1.0'
    )
    assert expected in body.decode()


async def test_two_servers_in_one_process_keep_separate_metrics() -> None:
    first, second = CollectorRegistry(), CollectorRegistry()
    servers = [
        await start_server([echo_service()], host="127.0.0.1", registry=registry)
        for registry in (first, second)
    ]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{servers[0].port}") as channel:
        await call(channel, "Say")(b"hi")
    for server in servers:
        await server.stop(None)

    assert b'grpc_method="Say"' in generate_latest(first)
    assert b'grpc_method="Say"' not in generate_latest(second)


async def test_graceful_stop_turns_health_not_serving_then_lets_calls_finish(
    running: RunningServer, channel: grpc.aio.Channel
) -> None:
    in_flight = asyncio.ensure_future(call(channel, "Slow")(b"0.5"))
    await asyncio.sleep(0.1)

    stopping = asyncio.create_task(running.stop(grace=5, drain_seconds=0.5))
    await asyncio.sleep(0.1)
    assert await health_of(channel) == NOT_SERVING
    assert await health_of(channel, ECHO) == NOT_SERVING

    await stopping
    assert await in_flight == b"done"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await health_of(channel)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_a_message_larger_than_the_limit_is_refused() -> None:
    server = await start_server([echo_service()], host="127.0.0.1", max_receive_message_bytes=1024)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            assert await call(channel, "Say")(b"x" * 1000) == b"x" * 1000
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(channel, "Say")(b"x" * 2000)
    finally:
        await server.stop(None)

    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


@asynccontextmanager
async def _serving(settings: ServerSettings) -> AsyncIterator[RunningServer]:
    """``serve`` running in a task until the block ends, then asked to stop."""
    stop, ready = asyncio.Event(), asyncio.Event()
    started: list[RunningServer] = []

    def on_started(server: RunningServer) -> None:
        started.append(server)
        ready.set()

    serving = asyncio.create_task(
        serve(
            settings,
            [echo_service()],
            stop_requested=stop,
            handle_signals=False,
            on_started=on_started,
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), 10)
        yield started[0]
    finally:
        stop.set()
        await asyncio.wait_for(serving, 15)


async def test_serve_runs_until_asked_to_stop() -> None:
    settings = ServerSettings.from_env({"GRPC_PORT": "0", "METRICS_PORT": "0"})
    async with (
        _serving(settings) as server,
        grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel,
    ):
        assert await health_of(channel) == SERVING

    assert await server.health.Check(health_pb2.HealthCheckRequest(service=""), None) == (
        health_pb2.HealthCheckResponse(status=NOT_SERVING)
    )


@pytest.mark.parametrize(("listen_host", "bound"), [("127.0.0.1", {"127.0.0.1"}), ("", None)])
async def test_the_servers_listen_where_listen_host_says(
    listen_host: str, bound: set[str] | None
) -> None:
    """``cardtable run`` sets 127.0.0.1: its gRPC port is not reachable from outside."""
    settings = ServerSettings.from_env(
        {"GRPC_PORT": "0", "METRICS_PORT": "0", "LISTEN_HOST": listen_host}
    )
    async with _serving(settings) as server:
        listening = {
            connection.laddr.ip
            for connection in psutil.Process().net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN and connection.laddr.port == server.port
        }
    if bound is None:
        assert listening & {"::", "0.0.0.0"}
    else:  # gRPC may report the loopback in its IPv6-mapped form
        assert {address.removeprefix("::ffff:") for address in listening} == bound


SERVICE_MAIN = textwrap.dedent(
    """
    import asyncio, os
    from cardtable.platform.grpc_server import serve
    from cardtable.platform.logging import configure_logging
    from cardtable.platform.settings import ServerSettings

    settings = ServerSettings.from_env(os.environ)
    configure_logging(settings.log_level, service="probe")
    asyncio.run(serve(settings, []))
    """
)


@pytest.mark.services
def test_a_service_process_stops_gracefully_on_sigterm() -> None:
    env = {**os.environ, "GRPC_PORT": "0", "METRICS_PORT": "0", "SHUTDOWN_GRACE_SECONDS": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", SERVICE_MAIN], env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    started: dict[str, Any] = json.loads(process.stdout.readline())
    assert started["message"] == "grpc server started"
    assert started["grpc_port"] > 0 and started["metrics_port"] > 0

    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=15)

    assert process.returncode == 0
    messages = [json.loads(line)["message"] for line in out.splitlines()]
    assert messages == ["grpc server stopping", "grpc server stopped"]


def test_a_missing_setting_stops_a_service_before_it_listens() -> None:
    code = (
        "import os\n"
        "from cardtable.platform.settings import NatsSettings\n"
        "NatsSettings.from_env(os.environ)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "NATS_URL"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30
    )

    assert result.returncode == 1
    assert "NATS_URL is required but not set" in result.stderr
