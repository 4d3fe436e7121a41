"""``cardtable call ADDRESS list|SERVICE/METHOD``: grpcurl's everyday uses, shipped with us.

The README's gRPC examples need a client that ``make install`` puts in place. No maintained
package on PyPI ships the grpcurl binary (the one that does is a 2022 source archive with a
Linux x86-64 binary inside), so this command does what those examples need with the grpc
library already installed: it asks the server's reflection service for the descriptors, as
grpcurl does, so it works against any of our services (or any server with reflection) with no
``.proto`` file and no generated stub. Requests and replies are protobuf JSON; a server
streaming method prints each message as it arrives.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

#: The word that lists services instead of calling a method, as in grpcurl.
LIST = "list"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``call`` to the ``cardtable`` command line."""
    parser = commands.add_parser(
        "call",
        help="call a gRPC method with a JSON request, or list services (like grpcurl)",
    )
    parser.add_argument("address", help="host:port of the service (plaintext)")
    parser.add_argument(
        "method",
        nargs="?",
        default=LIST,
        help="SERVICE/METHOD (full names), or 'list' (the default) to list the services",
    )
    parser.add_argument("service", nargs="?", help="after 'list': list this service's methods")
    parser.add_argument("-d", "--data", default="{}", help="the request as protobuf JSON")
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="request metadata, e.g. 'authorization: Bearer TOKEN' (repeatable)",
    )
    parser.add_argument(
        "--max-time", type=float, metavar="SECONDS", help="deadline (default: none)"
    )
    parser.set_defaults(handler=cmd_call)


class CallError(Exception):
    """A request this command cannot make, with the sentence that says why."""


def _metadata(headers: list[str]) -> tuple[tuple[str, str | bytes], ...]:
    pairs: list[tuple[str, str | bytes]] = []
    for header in headers:
        name, separator, value = header.partition(":")
        if not separator or not name.strip():
            raise CallError(f"-H takes 'NAME: VALUE', not {header!r}")
        pairs.append((name.strip().lower(), value.strip()))
    return tuple(pairs)


def _method(pool: DescriptorPool, full_name: str) -> MethodDescriptor:
    service_name, _, method_name = full_name.rpartition("/")
    if not service_name or not method_name:
        raise CallError(f"name a method as SERVICE/METHOD, not {full_name!r}")
    try:
        service = pool.FindServiceByName(service_name.lstrip("/"))
    except KeyError:
        raise CallError(f"the server has no service {service_name!r} (try: list)") from None
    method = service.methods_by_name.get(method_name)
    if method is None:
        names = ", ".join(sorted(service.methods_by_name))
        raise CallError(f"{service.full_name} has no method {method_name!r}; it has {names}")
    return method


def _replies(
    channel: grpc.Channel,
    method: MethodDescriptor,
    request: Message,
    metadata: tuple[tuple[str, str | bytes], ...],
    timeout: float | None,
) -> Iterator[Message]:
    if method.client_streaming:
        raise CallError(f"{method.full_name} takes a stream of requests; this command sends one")
    reply_class = GetMessageClass(method.output_type)
    path = f"/{method.containing_service.full_name}/{method.name}"
    serialize, deserialize = type(request).SerializeToString, reply_class.FromString
    if method.server_streaming:
        stream = channel.unary_stream(path, serialize, deserialize)
        yield from stream(request, metadata=metadata, timeout=timeout)
    else:
        unary = channel.unary_unary(path, serialize, deserialize)
        yield unary(request, metadata=metadata, timeout=timeout)


def call(args: argparse.Namespace) -> None:
    """List or call as ``args`` say, printing to stdout; raises CallError or grpc.RpcError."""
    with grpc.insecure_channel(args.address) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        pool = DescriptorPool(database)
        if args.method == LIST:
            if args.service:
                service = pool.FindServiceByName(args.service)
                for method in service.methods:
                    print(f"{service.full_name}.{method.name}")
            else:
                for name in sorted(database.get_services()):
                    print(name)
            return
        method = _method(pool, args.method)
        request = GetMessageClass(method.input_type)()
        try:
            json_format.Parse(args.data, request)
        except json_format.ParseError as error:
            expected = method.input_type.full_name
            raise CallError(f"the request is not a {expected}: {error}") from None
        for reply in _replies(channel, method, request, _metadata(args.header), args.max_time):
            print(json_format.MessageToJson(reply, indent=2), flush=True)


def cmd_call(args: argparse.Namespace) -> int:
    """Exit 0, 1 with the status a call failed with (as grpcurl prints it), or 2 for a bad
    request."""
    try:
        call(args)
    except CallError as problem:
        print(f"cardtable call: {problem}", file=sys.stderr)
        return 2
    except grpc.RpcError as error:
        code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
        details = error.details() if isinstance(error, grpc.Call) else str(error)
        print(f"ERROR:\n  Code: {code.name}\n  Message: {details}", file=sys.stderr)
        return 1
    except KeyError as missing:  # a service the reflection service does not know
        print(f"cardtable call: the server knows no {missing.args[0]!r}", file=sys.stderr)
        return 2
    return 0
