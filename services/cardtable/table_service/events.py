"""Building domain events with their audience, so every event says who may see it."""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf import timestamp_pb2

from cardtable.platform.fact_upcasting import typed_from_rules_fact
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

PUBLIC = common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC)
SERVER_ONLY = common_pb2.Audience(kind=common_pb2.Audience.KIND_SERVER_ONLY)


def public(**body: object) -> events_pb2.Event:
    """A public event: ``public(player_seated=events_pb2.PlayerSeated(...))``."""
    return events_pb2.Event(audience=PUBLIC, **body)  # type: ignore[arg-type]


def server_only(**body: object) -> events_pb2.Event:
    return events_pb2.Event(audience=SERVER_ONLY, **body)  # type: ignore[arg-type]


def with_audience(audience: common_pb2.Audience, **body: object) -> events_pb2.Event:
    return events_pb2.Event(audience=audience, **body)  # type: ignore[arg-type]


def facts_recorded(facts: Iterable[rules_pb2.Fact]) -> list[events_pb2.Event]:
    """Each rules fact as an event with the fact's own audience, the fact typed: the rules
    contract still carries facts as a kind and a Struct, and the log holds typed ones only."""
    return [
        events_pb2.Event(audience=fact.audience, fact_recorded=typed_from_rules_fact(fact))
        for fact in facts
    ]


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp
