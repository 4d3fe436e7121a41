"""A bare gRPC echo server: the floor under every service's unary call, for raw limits.

It answers one unary method with the request's own bytes: no protobuf, no interceptors, no
metrics. ``cardtable bench`` runs it as a separate process (as a service would be) and counts
the calls one Python client gets through, which bounds what any of our services can answer.

    python -m cardtable_tools.bench.grpc_echo PORT
"""

from __future__ import annotations

import sys

import grpc

from cardtable.platform.entrypoint import run_async

SERVICE = "cardtable_tools.bench.Echo"
METHOD = f"/{SERVICE}/Echo"


def _same(payload: bytes) -> bytes:
    return payload


async def _echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    return request


async def serve(port: int) -> None:
    """Serve the echo method on loopback ``port`` until killed."""
    handler = grpc.unary_unary_rpc_method_handler(
        _echo, request_deserializer=_same, response_serializer=_same
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, {"Echo": handler}),)
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    run_async(serve(int(sys.argv[1])))


if __name__ == "__main__":
    main()
