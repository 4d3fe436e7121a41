"""A profile's samples by kind of work: what of a service's CPU is the transport every
implementation pays (event loop, gRPC, NATS and PostgreSQL clients), what is cryptography, and
what is our own Python (engine, views, service code).

Each sample is put under the module of its innermost Python frame. py-spy attributes time in C
to the Python frame that called it, so a protobuf encode or a SHA-256 called from our code is
counted as ours, and the native event loop and gRPC core as ``Runner.run``'s own samples.

    >>> kinds_of(["main (asyncio/runners.py:118) 6", "main;apply (cardtable/engine/game.py:4) 4"])
    {'event loop and gRPC core (native)': 0.6, 'engine': 0.4}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

#: Kinds in the order a report lists them, each with the path fragments that place a frame in
#: it (the first kind whose fragment matches wins); ``our service code`` takes the rest of
#: ``cardtable/``, ``other`` everything else.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("event loop and gRPC core (native)", ("asyncio/runners.py", "threading.py", "selectors.py")),
    ("asyncio (Python)", ("asyncio/", "uvloop/")),
    ("gRPC client and server (Python)", ("grpc/",)),
    ("NATS client", ("nats/",)),
    ("PostgreSQL client", ("asyncpg/",)),
    ("signatures and sealing", ("nacl/", "cryptography/")),
    ("metrics, logs and traces", ("prometheus_client/", "logging/", "opentelemetry/")),
    ("engine", ("cardtable/engine/",)),
    ("views and facts", ("cardtable/views/", "cardtable/platform/protobuf_wire.py")),
    ("our service code", ("cardtable/",)),
)
OTHER = "other (standard library, dataclasses, json)"
#: Kinds whose floor is the transport: what a move's hops cost in any Python implementation.
TRANSPORT_KINDS = frozenset(name for name, _ in KINDS[:5])


def kind_of(frame: str) -> str:
    """The kind of work a collapsed-stack frame (``function (path:line)``) is doing."""
    path = frame.partition(" (")[2].rsplit(":", 1)[0]
    for name, fragments in KINDS:
        if any(fragment in path for fragment in fragments):
            return name
    return OTHER


def kinds_of(collapsed: Iterable[str]) -> dict[str, float]:
    """Each kind's share of the samples (by their innermost frame), largest first."""
    counts: Counter[str] = Counter()
    for line in collapsed:
        stack, _, count_text = line.rstrip().rpartition(" ")
        if stack and count_text.isdigit():
            counts[kind_of(stack.rsplit(";", 1)[-1])] += int(count_text)
    samples = sum(counts.values())
    return {kind: round(count / samples, 3) for kind, count in counts.most_common()}
