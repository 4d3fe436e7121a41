"""The engine's facts as the log's typed fact messages (proto/cardtable/events/v1/facts.proto),
and back: the one translation between the two.

The log names a fact by its field in ``FactRecorded.body``, never by a Python class: ``KINDS``
below is the only place the two meet, so renaming an engine class changes nothing written.
Every other field maps by name, the message's field being named as the engine's:

- a field named ``card`` or ``*_card`` holds one card, ``cards`` or ``*_cards`` several, as
  short texts ("QS", "10H");
- a repeated field is a tuple, an ``optional`` one is ``None`` when unset;
- the text fields that are closed sets (a trump, a 3-5-8 contract, a Hearts pass direction, a
  Belote bid) are enums, translated by the tables here.

The audience is not in the message: it is the enclosing ``Event``'s (``fact_event``).

>>> from cardtable.engine.facts import CardPlayed, TrumpChosen
>>> fact_message(CardPlayed(2, 51)).card_played.card
'AS'
>>> engine_fact(fact_message(TrumpChosen("", None)), None)
TrumpChosen(trump='', seat=None, audience=None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from cardtable.engine.cards import card_texts, format_card, parse_card
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import (
    Audience,
    BidMade,
    CardPlayed,
    CardsDealt,
    CardTurnedUp,
    DealScored,
    DealStarted,
    Fact,
    GameEnded,
    TrickWon,
    TrumpChosen,
)
from cardtable.engine.games.belote import rules as belote
from cardtable.engine.games.hearts import rules as hearts
from cardtable.engine.games.three_five_eight import rules as three_five_eight
from cardtable.engine.games.whist import rules as whist
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2, facts_pb2

#: Each kind of fact: its field in ``FactRecorded.body`` (the name the log holds) and the
#: engine's class for it (a NamedTuple).
KINDS: dict[str, Any] = {
    "deal_started": DealStarted,
    "cards_dealt": CardsDealt,
    "card_turned_up": CardTurnedUp,
    "trump_chosen": TrumpChosen,
    "bid_made": BidMade,
    "card_played": CardPlayed,
    "trick_won": TrickWon,
    "deal_scored": DealScored,
    "game_ended": GameEnded,
    "streak_bonus": whist.StreakBonus,
    "passing_announced": hearts.PassingAnnounced,
    "pass_chosen": hearts.PassChosen,
    "cards_passed": hearts.CardsPassed,
    "moon_shot": hearts.MoonShot,
    "contract_chosen": three_five_eight.ContractChosen,
    "exchanges_owed": three_five_eight.ExchangesOwed,
    "cards_exchanged": three_five_eight.CardsExchanged,
    "exchanges_skipped": three_five_eight.ExchangesSkipped,
    "talon_taken": three_five_eight.TalonTaken,
    "cards_discarded": three_five_eight.CardsDiscarded,
    "trump_bid_made": belote.TrumpBidMade,
    "turned_card_taken": belote.TurnedCardTaken,
    "deal_thrown_in": belote.DealThrownIn,
    "belote_scored": belote.BeloteScored,
    "capot_made": belote.CapotMade,
    "contract_settled": belote.ContractSettled,
}
_FIELD_OF: dict[type, str] = {kind: field for field, kind in KINDS.items()}

#: The engine's trump texts ("" for no trump), as enum values.
TRUMPS: dict[str, int] = {
    "C": facts_pb2.TRUMP_CLUBS,
    "D": facts_pb2.TRUMP_DIAMONDS,
    "H": facts_pb2.TRUMP_HEARTS,
    "S": facts_pb2.TRUMP_SPADES,
    "": facts_pb2.TRUMP_NONE,
}
#: 3-5-8's contract texts, as enum values.
CONTRACTS: dict[str, int] = {
    "C": facts_pb2.CONTRACT_CLUBS,
    "D": facts_pb2.CONTRACT_DIAMONDS,
    "H": facts_pb2.CONTRACT_HEARTS,
    "S": facts_pb2.CONTRACT_SPADES,
    three_five_eight.NO_TRUMP: facts_pb2.CONTRACT_NO_TRUMP,
    three_five_eight.MINIMUM_TRICKS: facts_pb2.CONTRACT_MINIMUM_TRICKS,
}
#: Hearts' pass directions, as enum values.
PASS_DIRECTIONS: dict[str, int] = {
    "left": facts_pb2.PASS_DIRECTION_LEFT,
    "right": facts_pb2.PASS_DIRECTION_RIGHT,
    "across": facts_pb2.PASS_DIRECTION_ACROSS,
    "none": facts_pb2.PASS_DIRECTION_NONE,
}
#: Suit letters, as enum values (a Belote bid names one).
SUITS: dict[str, int] = {
    "C": facts_pb2.SUIT_CLUBS,
    "D": facts_pb2.SUIT_DIAMONDS,
    "H": facts_pb2.SUIT_HEARTS,
    "S": facts_pb2.SUIT_SPADES,
}
#: Belote's bid words, as enum values ("name" also sets the suit).
TRUMP_BIDS: dict[str, int] = {
    "take": facts_pb2.TRUMP_BID_TAKE,
    "name": facts_pb2.TRUMP_BID_NAME,
    "pass": facts_pb2.TRUMP_BID_PASS,
}


class FactMessageError(ValueError):
    """A fact that cannot be written as, or read from, a typed fact message."""


def text_of(table: dict[str, int], value: int, what: str) -> str:
    """The engine's text for an enum ``value`` of ``table`` (the inverse of looking it up)."""
    for text, number in table.items():
        if number == value:
            return text
    raise FactMessageError(f"{value} is not a known {what}")


def _enum_of(table: dict[str, int], text: str, what: str) -> int:
    if text not in table:
        raise FactMessageError(f"{text!r} is not a known {what}")
    return table[text]


def _write_bid(body: Any, bid: str) -> None:
    """A Belote bid's text ("take", "pass", "name H") as the bid and the suit it names."""
    word, _, suit = bid.partition(" ")
    body.bid = _enum_of(TRUMP_BIDS, word, "Belote bid")
    if suit:
        body.suit = _enum_of(SUITS, suit, "suit")


def _read_bid(body: Any) -> str:
    word = text_of(TRUMP_BIDS, body.bid, "Belote bid")
    if body.bid == facts_pb2.TRUMP_BID_NAME:
        return f"{word} {text_of(SUITS, body.suit, 'suit')}"
    return word


def _enum_field(table: dict[str, int], what: str) -> tuple[Callable[..., None], Callable[..., Any]]:
    """How to write and read a text field of the engine that is an enum in the message."""

    def write(body: Any, name: str, text: str) -> None:
        setattr(body, name, _enum_of(table, text, what))

    def read(body: Any, name: str) -> str:
        return text_of(table, getattr(body, name), what)

    return write, read


#: The fields that are not written as they are: (kind, field) -> (write, read).
_ENUM_FIELDS: dict[tuple[type, str], tuple[Callable[..., None], Callable[..., Any]]] = {
    (TrumpChosen, "trump"): _enum_field(TRUMPS, "trump"),
    (three_five_eight.ContractChosen, "contract"): _enum_field(CONTRACTS, "contract"),
    (hearts.PassingAnnounced, "direction"): _enum_field(PASS_DIRECTIONS, "pass direction"),
    (belote.TrumpBidMade, "bid"): (
        lambda body, name, bid: _write_bid(body, bid),
        lambda body, name: _read_bid(body),
    ),
}


def _is_card(name: str) -> bool:
    return name == "card" or name.endswith("_card")


def _is_cards(name: str) -> bool:
    return name == "cards" or name.endswith("_cards")


def audience_message(audience: Audience) -> common_pb2.Audience:
    """``None`` is public; a tuple of seats is those seats (empty: nobody outside the servers)."""
    if audience is None:
        return common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC)
    if not audience:
        return common_pb2.Audience(kind=common_pb2.Audience.KIND_SERVER_ONLY)
    return common_pb2.Audience(kind=common_pb2.Audience.KIND_SEATS, seats=list(audience))


def audience_of(message: common_pb2.Audience) -> Audience:
    """The engine's audience for ``message`` (the inverse of :func:`audience_message`)."""
    if message.kind == common_pb2.Audience.KIND_SEATS:
        return tuple(message.seats)
    if message.kind == common_pb2.Audience.KIND_SERVER_ONLY:
        return ()
    return None


def fact_message(fact: Fact) -> events_pb2.FactRecorded:
    """``fact`` as the typed message the log holds (its audience goes on the event)."""
    field = _FIELD_OF.get(type(fact))
    if field is None:
        raise FactMessageError(f"{type(fact).__name__} has no typed fact message")
    recorded = events_pb2.FactRecorded()
    body = getattr(recorded, field)
    body.SetInParent()
    try:
        for name, value in zip(fact._fields, fact, strict=True):
            if name == "audience" or value is None:
                continue
            special = _ENUM_FIELDS.get((type(fact), name))
            if special is not None:
                special[0](body, name, value)
            elif _is_card(name):
                setattr(body, name, format_card(value))
            elif _is_cards(name):
                getattr(body, name).extend(card_texts(value))
            elif isinstance(value, tuple):
                getattr(body, name).extend(value)
            else:
                setattr(body, name, value)
    except (InvalidInput, TypeError, ValueError) as error:
        raise FactMessageError(f"{type(fact).__name__}: {error}") from None
    return recorded


def fact_event(fact: Fact) -> events_pb2.Event:
    """``fact`` as the event a writer appends: the typed fact with the fact's audience."""
    return events_pb2.Event(
        audience=audience_message(fact.audience), fact_recorded=fact_message(fact)
    )


def engine_fact(recorded: events_pb2.FactRecorded, audience: Audience) -> Fact:
    """The engine's fact for a typed ``recorded`` fact seen by ``audience``."""
    field = recorded.WhichOneof("body")
    if field is None:
        raise FactMessageError("the fact is not typed (read it through fact_upcasting)")
    kind = KINDS[field]
    body: Message = getattr(recorded, field)
    descriptors = body.DESCRIPTOR.fields_by_name
    values: dict[str, Any] = {}
    try:
        for name in kind._fields:
            if name == "audience":
                values[name] = audience
                continue
            special = _ENUM_FIELDS.get((kind, name))
            descriptor = descriptors[name]
            if special is not None:
                values[name] = special[1](body, name)
            elif descriptor.has_presence and not body.HasField(name):
                values[name] = None
            elif _is_card(name):
                values[name] = parse_card(getattr(body, name))
            elif _is_cards(name):
                values[name] = tuple(parse_card(text) for text in getattr(body, name))
            elif descriptor.is_repeated:
                values[name] = tuple(getattr(body, name))
            else:
                values[name] = getattr(body, name)
    except InvalidInput as error:
        raise FactMessageError(f"{field}: {error}") from None
    return kind(**values)
