"""W3C trace context carried across gRPC calls and NATS messages (OpenTelemetry propagation).

A move can then be followed from the client's call through the table service, the rules
service and the event store to the projection: each hop takes the ``traceparent`` it received
and passes it on. Only the OpenTelemetry API is used here: without an SDK configured nothing
is recorded, but the context still travels, and logs carry its trace id so one move's lines
can be found in every service's logs. Configuring an SDK exporter later needs no code change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract, inject


def context_from_metadata(
    metadata: Iterable[tuple[str, str | bytes]] | None,
) -> otel_context.Context:
    """The trace context a gRPC caller sent (``traceparent`` / ``tracestate`` metadata)."""
    carrier = {
        key.lower(): value.decode() if isinstance(value, bytes) else value
        for key, value in metadata or ()
        if key.lower() in ("traceparent", "tracestate")
    }
    return extract(carrier)


def context_from_headers(headers: Mapping[str, str] | None) -> otel_context.Context:
    """The trace context a NATS message carries in its headers."""
    return extract(dict(headers or {}))


@contextmanager
def current(context: otel_context.Context) -> Iterator[None]:
    """Make ``context`` current for the block (asyncio tasks each keep their own)."""
    token = otel_context.attach(context)
    try:
        yield
    finally:
        otel_context.detach(token)


def outgoing_headers() -> dict[str, str]:
    """``traceparent`` (and ``tracestate``) of the current context, for a message or a call."""
    carrier: dict[str, str] = {}
    inject(carrier)
    return carrier


def outgoing_metadata() -> tuple[tuple[str, str], ...]:
    """The current trace context as gRPC metadata."""
    return tuple(outgoing_headers().items())


def current_trace_id() -> str:
    """The current trace id in hex, or "" when there is none (for log lines)."""
    span_context = trace.get_current_span().get_span_context()
    return format(span_context.trace_id, "032x") if span_context.is_valid else ""
