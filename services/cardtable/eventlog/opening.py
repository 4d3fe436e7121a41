"""A table's batches with every deal that has ended opened, and the running deal left sealed.

The log stores a deal's hidden events sealed (platform/deal_sealing.py) and publishes the deal's
key beside its seed once the deal is over. Reading a log from outside the table service (export,
replay, audit) therefore sees exactly what is public: every ended deal in full, and of the deal
still being played only what every seat sees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

from cardtable.platform.deal_sealing import UnsealError, open_event
from cardtable_api.events.v1 import events_pb2


def revealed_deal_keys(batches: Iterable[events_pb2.EventBatch]) -> dict[int, bytes]:
    """The key of every deal whose seed the table has published, by deal number."""
    return {
        event.deal_seed_revealed.deal_number: event.deal_seed_revealed.deal_key
        for batch in batches
        for event in batch.events
        if event.HasField("deal_seed_revealed") and event.deal_seed_revealed.deal_key
    }


def still_sealed(batches: Iterable[events_pb2.EventBatch]) -> int:
    """How many events of ``batches`` are sealed (what opening them left hidden)."""
    return sum(event.HasField("sealed") for batch in batches for event in batch.events)


def opened_batches(
    table_id: str, batches: Sequence[events_pb2.EventBatch]
) -> list[events_pb2.EventBatch]:
    """``batches`` with the sealed events of every revealed deal opened.

    Events of a deal not yet revealed stay sealed. One that does not open with its deal's
    published key (altered, or a key that is not the deal's) stays sealed too: the audit then
    finds the deal's record incomplete.
    """
    keys = revealed_deal_keys(batches)
    if not keys:
        return list(batches)
    opened: list[events_pb2.EventBatch] = []
    for batch in batches:
        if not any(event.HasField("sealed") for event in batch.events):
            opened.append(batch)
            continue
        plain = events_pb2.EventBatch()
        plain.CopyFrom(batch)
        del plain.events[:]
        for event in batch.events:
            key = keys.get(event.sealed.deal_number) if event.HasField("sealed") else None
            if key is not None:
                with contextlib.suppress(UnsealError):  # left sealed: the audit finds it
                    event = open_event(event, table_id, key)
            plain.events.append(event)
        opened.append(plain)
    return opened
