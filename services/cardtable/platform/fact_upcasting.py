"""The one reading of facts in the form the log held before typed facts.

Before typed facts a ``FactRecorded`` carried a ``cardtable.rules.v1.Fact``: the fact's kind as
the engine's class name of the time, its audience, and its fields as a ``Struct`` (numbers as
doubles, cards as short texts, everything else as the engine's texts). Every reader of the log
(the table service's watch streams, game records and audits, the scoring projection) takes a
fact through :func:`typed_fact`, which returns a typed one whatever form was written, so no
reader knows the old form.

The rules contract still hands facts to the table service in that same form (rules.proto), so
the table service types them with :func:`typed_from_rules_fact` as it writes.

>>> from google.protobuf import struct_pb2
>>> from cardtable_api.rules.v1 import rules_pb2
>>> fields = struct_pb2.Struct()
>>> fields.update({"seat": 2.0, "card": "QS"})
>>> old = events_pb2.FactRecorded(fact=rules_pb2.Fact(kind="CardPlayed", fields=fields))
>>> typed_fact(old).card_played.card
'QS'
"""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import struct_pb2

from cardtable.engine.cards import parse_card
from cardtable.engine.errors import InvalidInput
from cardtable.platform.fact_messages import (
    KINDS,
    FactMessageError,
    audience_of,
    fact_message,
)
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

#: The kinds written before typed facts, by the name written then, and their typed field.
#: Frozen: these names are in old logs, whatever the engine's classes are called today.
OLD_KINDS: dict[str, str] = {
    "DealStarted": "deal_started",
    "CardsDealt": "cards_dealt",
    "CardTurnedUp": "card_turned_up",
    "TrumpChosen": "trump_chosen",
    "BidMade": "bid_made",
    "CardPlayed": "card_played",
    "TrickWon": "trick_won",
    "DealScored": "deal_scored",
    "GameEnded": "game_ended",
    "StreakBonus": "streak_bonus",
    "PassingAnnounced": "passing_announced",
    "PassChosen": "pass_chosen",
    "CardsPassed": "cards_passed",
    "MoonShot": "moon_shot",
    "ContractChosen": "contract_chosen",
    "ExchangesOwed": "exchanges_owed",
    "CardsExchanged": "cards_exchanged",
    "ExchangesSkipped": "exchanges_skipped",
    "TalonTaken": "talon_taken",
    "CardsDiscarded": "cards_discarded",
    "TrumpBidMade": "trump_bid_made",
    "TurnedCardTaken": "turned_card_taken",
    "DealThrownIn": "deal_thrown_in",
    "BeloteScored": "belote_scored",
    "CapotMade": "capot_made",
    "ContractSettled": "contract_settled",
}


class FactUpcastError(ValueError):
    """A fact of the old form that cannot be read: an unknown kind or a malformed field."""


def typed_fact(recorded: events_pb2.FactRecorded) -> events_pb2.FactRecorded:
    """``recorded`` as a typed fact: itself when it is typed, else its old form read.

    A fact of a kind this reader does not know (written by a newer version, or an old kind
    no longer read) comes back with no ``body``, and readers skip it, as they skip any field
    they do not know.
    """
    if recorded.WhichOneof("body") is not None or not recorded.HasField("fact"):
        return recorded
    if recorded.fact.kind not in OLD_KINDS:
        return events_pb2.FactRecorded()
    return typed_from_rules_fact(recorded.fact)


def typed_event(event: events_pb2.Event) -> events_pb2.Event:
    """``event`` with its fact typed (the same object when there is nothing to read)."""
    if not event.HasField("fact_recorded") or event.fact_recorded.WhichOneof("body"):
        return event
    typed = events_pb2.Event()
    typed.CopyFrom(event)
    typed.fact_recorded.CopyFrom(typed_fact(event.fact_recorded))
    return typed


def typed_from_rules_fact(fact: rules_pb2.Fact) -> events_pb2.FactRecorded:
    """A fact in the old form (kind, audience and Struct fields) as a typed fact."""
    field = OLD_KINDS.get(fact.kind)
    if field is None:
        raise FactUpcastError(f"unknown kind of fact {fact.kind!r}")
    kind = KINDS[field]
    fields = fact.fields.fields
    defaults: dict[str, Any] = kind._field_defaults
    values: dict[str, Any] = {"audience": audience_of(fact.audience)}
    for name in kind._fields:
        if name == "audience":
            continue
        if name in fields:
            values[name] = _value(fact.kind, name, fields[name])
        elif name in defaults:
            values[name] = defaults[name]
        else:
            raise FactUpcastError(f"{fact.kind} fact has no {name!r}")
    try:
        return fact_message(kind(**values))
    except FactMessageError as error:
        raise FactUpcastError(str(error)) from None


def _value(kind: str, name: str, value: struct_pb2.Value) -> Any:
    """One field as the engine held it, read back from what ``fact_to_dict`` wrote."""
    which = value.WhichOneof("kind")
    try:
        if which == "null_value" or which is None:
            return None
        if name == "card" or name.endswith("_card"):
            return parse_card(_text(value))
        if name == "cards" or name.endswith("_cards"):
            return tuple(parse_card(_text(item)) for item in _items(value))
        if which == "list_value":
            return tuple(_whole(item) for item in value.list_value.values)
        if which == "number_value":
            return _whole(value)
        if which == "string_value":
            return value.string_value
        if which == "bool_value":
            return value.bool_value
    except (InvalidInput, ValueError) as error:
        raise FactUpcastError(f"{kind} fact's {name!r}: {error}") from None
    raise FactUpcastError(f"{kind} fact's {name!r} is not a value a fact holds")


def _items(value: struct_pb2.Value) -> list[struct_pb2.Value]:
    if value.WhichOneof("kind") != "list_value":
        raise ValueError("not a list")
    return list(value.list_value.values)


def _text(value: struct_pb2.Value) -> str:
    if value.WhichOneof("kind") != "string_value":
        raise ValueError("not text")
    return value.string_value


def _whole(value: struct_pb2.Value) -> int:
    number = value.number_value
    if value.WhichOneof("kind") != "number_value" or not (
        math.isfinite(number) and number == int(number)
    ):
        raise ValueError("not a whole number")
    return int(number)
