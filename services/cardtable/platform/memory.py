"""The garbage collector's settings for a long-running service, applied once after startup."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Young objects allocated (net) between young collections; Python's default is 700.
YOUNG_COLLECTION_THRESHOLD = 10_000


def tune_garbage_collector() -> int:
    """Freeze the objects startup made, collect young objects less often; how many frozen.

    A collection stops the event loop, and every call waiting meanwhile carries the pause in
    its latency. Both settings were chosen by measuring under load
    (docs/proving-it.md#settings-the-figures-chose):

    - A started service holds tens of thousands of objects that live as long as it does:
      modules, classes, protobuf descriptors, gRPC and NATS machinery. Every full collection
      walked them again. Frozen, they are never examined again; they were never going to be
      garbage.
    - Each call allocates many objects that die within milliseconds (messages, coroutines).
      At Python's default of a young collection every 700 net allocations, the table service
      collected many times a second, and objects caught alive in the middle of a call
      were promoted, which then triggered full collections; a higher threshold collects far
      less often, for far less pause time in all.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, older, oldest)
    return gc.get_freeze_count()


@contextlib.contextmanager
def garbage_collector_tuned() -> Iterator[None]:
    """:func:`tune_garbage_collector` for a command that ends (a load generator): its own
    pauses would land in the latencies it measures. The settings are restored at the end."""
    thresholds = gc.get_threshold()
    tune_garbage_collector()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside the block, one full collection at its end.

    For a load generator's timed stretch: a pause of the clients' own collector would be
    counted as the latency of the moves waiting on it, though the services had answered them
    (docs/proving-it.md#settings-the-figures-chose). A stretch of a bench is seconds long
    and makes little cyclic garbage (a few objects per unary call), so it waits for the end.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
