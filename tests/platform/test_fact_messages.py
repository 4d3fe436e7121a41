"""Typed facts: every fact of every game converts to its message and back unchanged, and a fact
in the form written before typed facts reads as the typed one the writer now writes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import struct_pb2

from cardtable.engine import facts
from cardtable.engine.cards import parse_card, parse_cards
from cardtable.engine.facts import (
    BidMade,
    CardPlayed,
    CardsDealt,
    CardTurnedUp,
    DealScored,
    DealStarted,
    GameEnded,
    TrickWon,
    TrumpChosen,
)
from cardtable.engine.games.belote import rules as belote
from cardtable.engine.games.hearts import rules as hearts
from cardtable.engine.games.three_five_eight import rules as three_five_eight
from cardtable.engine.games.whist import rules as whist
from cardtable.engine.registry import GAMES
from cardtable.platform.fact_messages import (
    KINDS,
    FactMessageError,
    audience_of,
    engine_fact,
    fact_event,
    fact_message,
)
from cardtable.platform.fact_upcasting import (
    OLD_KINDS,
    FactUpcastError,
    typed_event,
    typed_fact,
    typed_from_rules_fact,
)
from cardtable.rules_service.codec import encode_facts
from cardtable_api.events.v1 import events_pb2, facts_pb2
from cardtable_api.rules.v1 import rules_pb2
from cardtable_tools.simulation.playout import play_random_game

#: One fact of every kind, as a game would produce it (the rarest ones, a moon shot or a
#: capot, seldom come up in random games).
EXAMPLES: list[Any] = [
    DealStarted(deal_number=3, dealer=1, cards_each=8),
    CardsDealt(seat=2, cards=tuple(parse_cards("2C 10H QS")), audience=(2,)),
    CardTurnedUp(card=parse_card("JD")),
    TrumpChosen(trump="H"),
    TrumpChosen(trump="S", seat=3),
    TrumpChosen(trump=""),
    BidMade(seat=0, tricks=2),
    CardPlayed(seat=1, card=parse_card("QS")),
    TrickWon(trick_number=4, leader=1, seat=3, cards=tuple(parse_cards("5H KH 2H AH")), points=4),
    DealScored(deal_number=3, scores=(12, -3, 0), totals=(30, -8, 14)),
    GameEnded(totals=(52, 101, 77, 90), places=(1, 4, 2, 3)),
    whist.StreakBonus(seat=1, points=-10),
    hearts.PassingAnnounced(deal_number=2, direction="right"),
    hearts.PassChosen(seat=0, cards=tuple(parse_cards("QS AH KH")), audience=(0,)),
    hearts.CardsPassed(seat=0, to_seat=3, cards=tuple(parse_cards("QS AH KH")), audience=(0, 3)),
    hearts.MoonShot(seat=2),
    three_five_eight.ContractChosen(seat=1, contract="MT"),
    three_five_eight.ContractChosen(seat=2, contract="NT"),
    three_five_eight.ExchangesOwed(seat=0, to_seat=2, number=2),
    three_five_eight.CardsExchanged(
        seat=0,
        to_seat=2,
        given_card=parse_card("7C"),
        returned_card=parse_card("AD"),
        audience=(0, 2),
    ),
    three_five_eight.ExchangesSkipped(seat=0, number=1),
    three_five_eight.TalonTaken(seat=1, cards=tuple(parse_cards("3C 4D 9H 10S")), audience=(1,)),
    three_five_eight.CardsDiscarded(seat=1, cards=tuple(parse_cards("2C 2D 3D 5S")), audience=(1,)),
    belote.TrumpBidMade(seat=1, bid_round=2, bid="name D"),
    belote.TrumpBidMade(seat=3, bid_round=1, bid="take"),
    belote.TrumpBidMade(seat=0, bid_round=1, bid="pass"),
    belote.TurnedCardTaken(seat=3, card=parse_card("JD")),
    belote.DealThrownIn(deal_number=2, dealer=0),
    belote.BeloteScored(seat=2, points=20),
    belote.CapotMade(seats=(0, 2), bonus=90, seat=2),
    belote.CapotMade(seats=(1, 3), bonus=90),
    belote.ContractSettled(taker=3, made=False, taker_points=70, defender_points=92),
]


def _old_form(fact: Any) -> events_pb2.FactRecorded:
    """``fact`` as the log held it before typed facts: the rules service's kind and Struct."""
    return events_pb2.FactRecorded(fact=encode_facts([fact])[0])


def _round_trip(fact: Any) -> None:
    event = fact_event(fact)
    back = engine_fact(event.fact_recorded, audience_of(event.audience))
    assert back == fact and type(back) is type(fact)
    assert typed_fact(_old_form(fact)) == event.fact_recorded
    assert typed_from_rules_fact(encode_facts([fact])[0]) == event.fact_recorded


@pytest.mark.parametrize("fact", EXAMPLES, ids=lambda fact: type(fact).__name__)
def test_each_kind_of_fact_converts_to_its_message_and_back(fact: Any) -> None:
    _round_trip(fact)


def test_the_examples_and_the_old_kinds_cover_every_kind() -> None:
    engine_facts = {
        value
        for module in (facts, whist, hearts, three_five_eight, belote)
        for value in vars(module).values()
        if isinstance(value, type) and "audience" in getattr(value, "_fields", ())
    }
    assert engine_facts == set(KINDS.values())
    assert {type(fact) for fact in EXAMPLES} == set(KINDS.values())
    assert set(OLD_KINDS.values()) == set(KINDS)
    recorded = events_pb2.FactRecorded.DESCRIPTOR.oneofs_by_name["body"]
    assert {field.name for field in recorded.fields} == set(KINDS)


@pytest.mark.parametrize("field", sorted(KINDS))
def test_a_message_has_the_fields_of_its_engine_fact(field: str) -> None:
    """Fields map by name, so a field added to one side only would be lost silently."""
    kind = KINDS[field]
    message = getattr(events_pb2.FactRecorded(), field)
    names = set(message.DESCRIPTOR.fields_by_name)
    if kind is belote.TrumpBidMade:
        names.discard("suit")  # part of the engine's bid text ("name D")
    assert names == set(kind._fields) - {"audience"}


@pytest.mark.parametrize(
    ("name", "players"),
    [
        (name, players)
        for name, spec in sorted(GAMES.items())
        for players in range(spec.min_players, spec.max_players + 1)
    ],
)
def test_every_fact_of_random_games_converts_and_reads_from_the_old_form(
    name: str, players: int
) -> None:
    rng = random.Random(f"facts-{name}-{players}")
    seen: set[type] = set()

    def check(state: Any, seat: Any, action: Any, produced: list[Any]) -> None:
        for fact in produced:
            _round_trip(fact)
            seen.add(type(fact))

    for _ in range(3):
        play_random_game(GAMES[name], players, {}, rng, check)
    assert {DealStarted, CardPlayed, TrickWon, DealScored, GameEnded} <= seen


def test_a_typed_fact_is_read_as_it_is() -> None:
    recorded = fact_message(CardPlayed(0, parse_card("2C")))
    assert typed_fact(recorded) is recorded
    event = fact_event(CardPlayed(0, parse_card("2C")))
    assert typed_event(event) is event


def test_an_old_event_is_typed_with_its_audience_kept() -> None:
    fact = hearts.PassChosen(seat=1, cards=tuple(parse_cards("2C 3C 4C")), audience=(1,))
    old = events_pb2.Event(audience=fact_event(fact).audience, fact_recorded=_old_form(fact))
    typed = typed_event(old)
    assert typed == fact_event(fact)
    assert old.fact_recorded.HasField("fact")  # the event read is left as it was


def test_a_kind_this_reader_does_not_know_reads_as_no_fact() -> None:
    """Readers skip it, as they skip any field they do not know (a newer writer's kind)."""
    old = events_pb2.FactRecorded(fact=rules_pb2.Fact(kind="JokerPlayed"))
    assert typed_fact(old).WhichOneof("body") is None
    newer = events_pb2.FactRecorded()
    assert typed_fact(newer).WhichOneof("body") is None


def _old(kind: str, **fields: Any) -> events_pb2.FactRecorded:
    struct = struct_pb2.Struct()
    struct.update(fields)
    return events_pb2.FactRecorded(fact=rules_pb2.Fact(kind=kind, fields=struct))


@pytest.mark.parametrize(
    ("old", "reason"),
    [
        (_old("CardPlayed", seat=1.5, card="QS"), "'seat': not a whole number"),
        (_old("CardPlayed", seat=1), "has no 'card'"),
        (_old("CardPlayed", seat=1, card="QX"), "'card'"),
        (_old("CardPlayed", seat=-1, card="QS"), "CardPlayed"),
        (_old("TrickWon", trick_number=1, leader=0, seat=0, cards="QS"), "not a list"),
        (_old("TrumpChosen", trump="X"), "not a known trump"),
        (_old("ContractChosen", seat=0, contract="Z"), "not a known contract"),
        (_old("TrumpBidMade", seat=0, bid_round=1, bid="name Q"), "not a known suit"),
        (_old("DealScored", deal_number=1, scores=[1, "x"], totals=[]), "not a whole number"),
    ],
)
def test_a_malformed_old_fact_is_refused_with_its_reason(
    old: events_pb2.FactRecorded, reason: str
) -> None:
    with pytest.raises(FactUpcastError, match=reason.replace("(", r"\(")):
        typed_fact(old)


def test_a_typed_fact_with_an_unset_enum_is_refused() -> None:
    recorded = events_pb2.FactRecorded(trump_chosen=facts_pb2.TrumpChosen())
    with pytest.raises(FactMessageError, match="not a known trump"):
        engine_fact(recorded, None)
    recorded = events_pb2.FactRecorded(card_played=facts_pb2.CardPlayed(seat=1, card="1S"))
    with pytest.raises(FactMessageError, match="card_played"):
        engine_fact(recorded, None)
