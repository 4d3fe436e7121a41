"""3-5-8 scenarios (docs/rules.md, 3-5-8) written with card strings, and random-game properties."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

import pytest

from cardtable.engine.actions import (
    PASS_BID,
    TAKE,
    Action,
    bid,
    choose_contract,
    discard,
    give,
    parse_action,
    play,
)
from cardtable.engine.cards import (
    FULL_DECK,
    SUIT_OF,
    Card,
    card_texts,
    parse_card,
    parse_cards,
)
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.facts import (
    CardsDealt,
    DealScored,
    Fact,
    GameEnded,
    TrickWon,
    visible_to,
)
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACTS,
    THREE_FIVE_EIGHT,
    CardsDiscarded,
    CardsExchanged,
    ContractChosen,
    ExchangesOwed,
    ExchangesSkipped,
    TalonTaken,
    ThreeFiveEightState,
)

# -- helpers -------------------------------------------------------------------------------


def deck_order(dealer: int, hands: Mapping[int, str], talon: str = "") -> list[Card]:
    """The deck order that deals ``hands`` with ``dealer`` dealing.

    Inverts the module's dealing: one card at a time from the dealer's left for 16 rounds,
    then the talon. Each hand is written in dealing order, so its first 6 cards are the ones
    its owner sees before the contract. Seats (and the talon) given short are filled with the
    cards nobody was given, lowest first.
    """
    given = {seat: parse_cards(text) for seat, text in hands.items()}
    talon_cards = parse_cards(talon)
    named = [card for cards in given.values() for card in cards] + talon_cards
    assert len(set(named)) == len(named), "a card is named twice"
    rest = iter(sorted(set(FULL_DECK) - set(named)))
    full = {}
    for seat in range(3):
        cards = given.get(seat, [])
        full[seat] = cards + [next(rest) for _ in range(16 - len(cards))]
    talon_cards += [next(rest) for _ in range(4 - len(talon_cards))]
    order = [full[(dealer + offset) % 3][index] for index in range(16) for offset in (1, 2, 3)]
    return order + talon_cards


def new_state(first_dealer: int = 0, **options: Any) -> ThreeFiveEightState:
    state = THREE_FIVE_EIGHT.new_game(3, options, first_dealer)
    assert isinstance(state, ThreeFiveEightState)
    return state


def resume_after_deal_one(
    previous_scores: tuple[int, int, int], first_dealer: int = 0, **options: Any
) -> ThreeFiveEightState:
    """A table resumed from a snapshot between deals 1 and 2, deal 1 having scored as given.

    Deal 1's declarer (left of the first dealer) is recorded as having played NT.
    """
    snapshot = new_state(first_dealer, **options).to_snapshot()
    snapshot["deal_number"] = 1
    snapshot["deal_scores"] = [list(previous_scores)]
    snapshot["totals"] = list(previous_scores)
    used: list[list[str]] = [[], [], []]
    used[(first_dealer + 1) % 3] = ["NT"]
    snapshot["state"]["used_contracts"] = used
    return ThreeFiveEightState.from_snapshot(snapshot)


def play_tricks(state: ThreeFiveEightState, *tricks: str) -> list[Fact]:
    """Play each trick's cards in play order, starting with its leader."""
    facts: list[Fact] = []
    for trick in tricks:
        for card in parse_cards(trick):
            facts += state.apply(state.to_act()[0], play(card))
    return facts


def cards(text: str) -> tuple[Card, ...]:
    return tuple(sorted(parse_cards(text)))


def random_action(state: ThreeFiveEightState, seat: int, rng: random.Random) -> Action:
    choice = state.card_set_choice(seat)
    if choice is not None:
        return choice.make(rng.sample(choice.cards, choice.count))
    return rng.choice(state.legal_actions(seat))


def places_by_total(totals: Sequence[int]) -> tuple[int, ...]:
    """Highest total first; a seat's place is one more than the number of seats above it."""
    return tuple(1 + sum(other > total for other in totals) for total in totals)


def shuffled(rng: random.Random) -> list[Card]:
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    return deck


# -- worked examples (docs/rules.md) ------------------------------------------------------------

TRUMP_EXAMPLE_HANDS = {
    # Dealer 0: seat 1 declares (target 8), seat 2 is third (5), seat 0 deals (3).
    1: "AS KS QS JS 10S 9S 8S 7S 6S 2C 3C 4C 5C 6C 7C 8C",
    2: "AC KC QC JC 10C 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH",
    0: "AD KD QD JD 10D 9D 8D 7D 6D 5D 4D 3D 2D KH AH 9C",
}


def test_worked_example_trump_declarer_9_third_5_dealer_2() -> None:
    state = new_state(first_dealer=0)
    state.deal(deck_order(0, TRUMP_EXAMPLE_HANDS, talon="5S 4S 3S 2S"))
    state.apply(1, choose_contract("S"))
    state.apply(1, discard(parse_cards("5S 4S 3S 2S")))
    facts = play_tricks(
        state,
        *["AS 2H 2D", "KS 3H 3D", "QS 4H 4D", "JS 5H 5D", "10S 6H 6D"],
        *["9S 7H 7D", "8S 8H 8D", "7S 9H 9D", "6S 10H 10D"],
        "2C AC 9C",
        *["KC JD 3C", "QC QD 4C", "JC KD 5C", "10C AD 6C"],
        "JH AH 7C",
        "KH 8C QH",
    )
    assert state.tricks_won == [2, 9, 5]
    assert DealScored(1, (-1, 1, 0), (-1, 1, 0)) in facts
    assert state.needs_deal() and state.progress() == pytest.approx(1 / 18)


def test_worked_example_minimum_tricks_declarer_1_third_6_dealer_9() -> None:
    state = new_state(first_dealer=0)
    hands = {
        1: "AS 2C 3C 4C 5C 6C 7C 8C 2D 3D 4D 5D 6D 7D 8D 9D",
        2: "9C 10C JC QC KC AC 6S 7S 8S 9S 10S JS QS KS 2H 3H",
        0: "10D JD QD KD AD 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",
    }
    state.deal(deck_order(0, hands, talon="2S 3S 4S 5S"))
    state.apply(1, choose_contract("MT"))
    state.apply(1, discard(parse_cards("2S 3S 4S 5S")))
    facts = play_tricks(
        state,
        "AS 6S 4H",
        "2C 9C 5H",
        *["10C 6H 3C", "JC 7H 4C", "QC 8H 5C", "KC 9H 6C", "AC 10H 7C"],
        "2H JH 8C",
        *["AH 2D 3H", "KH 3D 7S", "QH 4D 8S", "10D 5D 9S", "JD 6D 10S"],
        *["QD 7D JS", "KD 8D QS", "AD 9D KS"],
    )
    assert state.tricks_won == [9, 1, 6]
    # Limits in MT: declarer 3, third 5, dealer 8.
    assert state.targets() == (8, 3, 5)
    assert DealScored(1, (-1, 2, -1), (-1, 2, -1)) in facts


# Deal 2 with the first dealer 0: seat 1 deals, seat 2 declares, seat 0 is third.
# In the worked example A is seat 2 (+2), B seat 0 (0), C seat 1 (-2).
EXCHANGE_A = "AS KS QS JS 10S 9S 7H 2C 3C 4C 5C 6C 7C 8C 9C 10C"


def test_worked_example_exchange_debtor_returns_highest_of_the_suit() -> None:
    state = resume_after_deal_one((0, -2, 2))
    hands = {
        2: EXCHANGE_A,
        0: "8S 7S 6S 5S 4S 3S AD KD QD JD 10D 9D 8D 7D 6D 5D",
        1: "2S KH 9H 4D 3D 2D JC QC KC AC 2H 3H 4H 5H 6H 8H",
    }
    state.deal(deck_order(1, hands, talon="10H JH QH AH"))
    facts = state.apply(2, choose_contract("S"))
    assert ExchangesOwed(2, 1, 2) in facts
    assert state.phase == "exchange" and state.to_act() == (2,)

    facts = state.apply(2, give(parse_card("7H")))
    assert facts == [
        CardsExchanged(2, 1, parse_card("7H"), parse_card("KH"), (2, 1)),
    ]
    assert parse_card("KH") in state.hands[2] and parse_card("7H") in state.hands[1]
    # The second of the two exchanges owed.
    facts = state.apply(2, give(parse_card("2C")))
    assert facts[0] == CardsExchanged(2, 1, parse_card("2C"), parse_card("AC"), (2, 1))
    assert isinstance(facts[1], TalonTaken) and state.phase == "discard"


def test_worked_example_exchange_received_card_goes_back_when_highest() -> None:
    state = resume_after_deal_one((0, -2, 2))
    hands = {
        2: EXCHANGE_A,
        0: "8S 7S 6S 5S 4S 3S AD KD QD 2H 3H 4H 6H 8H 9H 10H",
        1: "2S 5H 4D 3D 2D 5D 6D 7D 8D 9D 10D JC QC KC AC JD",
    }
    state.deal(deck_order(1, hands, talon="JH QH KH AH"))
    state.apply(2, choose_contract("S"))
    before = list(state.hands[1])
    facts = state.apply(2, give(parse_card("7H")))
    assert facts == [CardsExchanged(2, 1, parse_card("7H"), parse_card("7H"), (2, 1))]
    assert state.hands[1] == before and parse_card("7H") in state.hands[2]


# -- contracts -------------------------------------------------------------------------------


def test_only_the_first_six_cards_are_seen_before_the_contract() -> None:
    rng = random.Random(3)
    order = shuffled(rng)
    state = new_state(first_dealer=2)
    facts = state.deal(order)
    dealt = [fact for fact in facts if isinstance(fact, CardsDealt)]
    for seat in range(3):
        first_six = tuple(sorted(order[seat:18:3]))  # seat 0 declares: first from the left
        assert CardsDealt(seat, first_six, (seat,)) in dealt
        observation = state.observation(seat)
        assert observation["hand"] == card_texts(first_six)
        assert len(observation["hand"]) == 6
    assert state.observation(None)["hand"] == []
    assert state.to_act() == (0,) and state.legal_actions(1) == []
    assert [str(action) for action in state.legal_actions(0)] == [
        "contract S", "contract H", "contract D", "contract C", "contract NT", "contract MT",
    ]  # fmt: skip

    facts = state.apply(0, choose_contract("NT"))
    for seat in range(3):
        rest = tuple(sorted(set(order[seat:48:3]) - set(order[seat:18:3])))
        assert CardsDealt(seat, rest, (seat,)) in facts
        # The declarer holds the talon too by now.
        assert len(state.observation(seat)["hand"]) == (20 if seat == 0 else 16)
    assert ContractChosen(0, "NT") in facts


def test_a_declarer_may_not_repeat_a_contract() -> None:
    rng = random.Random(11)
    state = new_state(first_dealer=0)
    for _ in range(3):  # seat 1 declares deal 1, then seats 2 and 0
        state.deal(shuffled(rng))
        seat = state.to_act()[0]
        if seat == 1:
            state.apply(1, choose_contract("NT"))
        while not state.needs_deal():
            seat = state.to_act()[0]
            state.apply(seat, random_action(state, seat, rng))
    state.deal(shuffled(rng))
    assert state.to_act() == (1,)
    assert state.why_illegal(1, choose_contract("NT")) == "you have already played NT"
    with pytest.raises(IllegalAction, match="you have already played NT"):
        state.apply(1, choose_contract("NT"))
    assert choose_contract("NT") not in state.legal_actions(1)
    assert len(state.legal_actions(1)) == 5
    with pytest.raises(IllegalAction, match="there is no contract 'XX'"):
        state.apply(1, choose_contract("XX"))


def test_full_game_each_seat_plays_every_contract_once() -> None:
    rng = random.Random(2024)
    state = new_state(first_dealer=1)
    declared = [0, 0, 0]
    while not state.is_over():
        if state.needs_deal():
            state.deal(shuffled(rng))
            declarer = state.to_act()[0]
            declared[declarer] += 1
            options = state.legal_actions(declarer)
            assert len(options) == 7 - declared[declarer]
            state.apply(declarer, rng.choice(options))
            continue
        seat = state.to_act()[0]
        state.apply(seat, random_action(state, seat, rng))
    assert declared == [6, 6, 6]
    assert [sorted(used) for used in state.used] == [sorted(CONTRACTS)] * 3
    assert len(state.deal_scores) == 18 and state.progress() == 1.0
    assert state.places() == places_by_total(state.totals)
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply(0, choose_contract("S"))


# -- the card exchange -----------------------------------------------------------------------


def _exchange_sequence(
    previous: tuple[int, int, int], contract: str = "H"
) -> tuple[list[Fact], list[tuple[int, int]]]:
    """Deal 2 after ``previous``: the owed facts and the (creditor, debtor) of each exchange."""
    state = resume_after_deal_one(previous)
    state.deal(shuffled(random.Random(sum(map(abs, previous)))))
    owed = state.apply(2, choose_contract(contract))
    pairs = []
    while state.phase == "exchange":
        seat = state.to_act()[0]
        facts = state.apply(seat, state.legal_actions(seat)[0])
        exchanged = facts[0]
        assert isinstance(exchanged, CardsExchanged)
        assert exchanged.audience == (exchanged.seat, exchanged.to_seat)
        pairs.append((exchanged.seat, exchanged.to_seat))
    assert state.phase == "discard"
    return [fact for fact in owed if isinstance(fact, ExchangesOwed)], pairs


def test_two_creditors_act_by_target_not_by_points() -> None:
    # Deal 2: seat 2 declares (8), seat 0 is third (5), seat 1 deals (3).
    owed, pairs = _exchange_sequence((1, 2, -3))
    assert owed == [ExchangesOwed(0, 2, 1), ExchangesOwed(1, 2, 2)]
    assert pairs == [(0, 2), (1, 2), (1, 2)]


def test_one_creditor_settles_two_debtors_in_target_order() -> None:
    owed, pairs = _exchange_sequence((-1, -2, 3))
    assert owed == [ExchangesOwed(2, 0, 1), ExchangesOwed(2, 1, 2)]
    assert pairs == [(2, 0), (2, 1), (2, 1)]
    # The declarer as a debtor comes first among debtors.
    owed, pairs = _exchange_sequence((-2, 3, -1))
    assert owed == [ExchangesOwed(1, 2, 1), ExchangesOwed(1, 0, 2)]
    assert pairs == [(1, 2), (1, 0), (1, 0)]


def test_no_trump_may_be_given_in_the_exchange() -> None:
    state = resume_after_deal_one((0, -2, 2))
    state.deal(deck_order(1, {2: EXCHANGE_A}))
    state.apply(2, choose_contract("S"))
    givable = {action.card for action in state.legal_actions(2)}
    assert givable and all(SUIT_OF[card] != 3 for card in givable)
    assert givable == {card for card in state.hands[2] if SUIT_OF[card] != 3}
    with pytest.raises(IllegalAction, match="you may not give a trump"):
        state.apply(2, give(parse_card("AS")))
    with pytest.raises(IllegalAction, match="you do not hold 2H"):
        state.apply(2, give(parse_card("2H")))
    with pytest.raises(IllegalAction, match="it is time to give seat 1 a card"):
        state.apply(2, play(parse_card("7H")))
    with pytest.raises(IllegalAction, match="not your turn"):
        state.apply(1, give(parse_card("2S")))


def test_a_creditor_holding_only_trumps_skips_the_exchanges_left() -> None:
    """A 16-card hand always holds three cards outside a 13-card trump suit, so a real deal
    cannot reach this; docs/rules.md still states the rule, so the hand is forced here."""
    state = resume_after_deal_one((2, 1, -3))  # third (seat 0) +2, dealer (seat 1) +1
    state.deal(deck_order(1, {2: "AH KH QH JH 10H 9H"}))
    state.hands[0] = [card for card in FULL_DECK if SUIT_OF[card] == 3]  # all 13 spades
    facts = state.apply(2, choose_contract("S"))
    assert ExchangesSkipped(0, 2) in facts
    assert state.phase == "exchange" and state.to_act() == (1,)
    state.apply(1, state.legal_actions(1)[0])
    assert state.phase == "discard"
    assert state.observation(2)["exchanges_skipped"] == [{"creditor": 0, "count": 2}]


@pytest.mark.parametrize("contract", ["NT", "MT"])
def test_no_exchange_in_no_trump_or_minimum_tricks(contract: str) -> None:
    state = resume_after_deal_one((0, -2, 2))
    state.deal(shuffled(random.Random(8)))
    facts = state.apply(2, choose_contract(contract))
    assert not [fact for fact in facts if isinstance(fact, ExchangesOwed | CardsExchanged)]
    assert state.phase == "discard" and isinstance(facts[-1], TalonTaken)


def test_no_exchange_in_the_first_deal_or_after_a_level_deal() -> None:
    state = new_state(first_dealer=0)
    state.deal(shuffled(random.Random(4)))
    facts = state.apply(1, choose_contract("S"))
    assert state.phase == "discard"
    assert not [fact for fact in facts if isinstance(fact, ExchangesOwed)]

    state = resume_after_deal_one((0, 0, 0))
    state.deal(shuffled(random.Random(5)))
    state.apply(2, choose_contract("S"))
    assert state.phase == "discard"


def test_exchanged_cards_are_seen_only_by_the_two_seats() -> None:
    state = resume_after_deal_one((0, -2, 2))
    state.deal(deck_order(1, {2: EXCHANGE_A}))
    state.apply(2, choose_contract("S"))
    (fact,) = state.apply(2, give(parse_card("7H")))
    assert fact.audience == (2, 1)
    assert not visible_to(fact, 0) and not visible_to(fact, None)
    assert state.observation(0)["exchanges"] == [
        {"creditor": 2, "debtor": 1, "given": None, "returned": None}
    ]
    assert state.observation(1)["exchanges"][0]["given"] == "7H"


# -- the talon and the play ------------------------------------------------------------------


def test_declarer_takes_the_talon_and_discards_four() -> None:
    state = new_state(first_dealer=0)
    state.deal(deck_order(0, TRUMP_EXAMPLE_HANDS, talon="5S 4S 3S 2S"))
    assert state.observation(1)["talon"] == [] and state.observation(1)["talon_size"] == 4
    facts = state.apply(1, choose_contract("S"))
    assert facts[-1] == TalonTaken(1, cards("2S 3S 4S 5S"), (1,))
    assert state.phase == "discard" and len(state.hands[1]) == 20
    choice = state.card_set_choice(1)
    assert choice is not None and choice.count == 4 and len(choice.cards) == 20
    assert state.card_set_choice(0) is None
    assert len(state.legal_actions(1)) == 4845  # 20 choose 4
    assert state.observation(1)["talon"] == ["2S", "3S", "4S", "5S"]
    assert state.observation(0)["talon"] == [] and state.observation(None)["talon"] == []

    with pytest.raises(IllegalAction, match="exactly four different cards"):
        state.apply(1, discard(parse_cards("2C 3C 4C")))
    with pytest.raises(IllegalAction, match="you do not hold AH"):
        state.apply(1, discard(parse_cards("2C 3C 4C AH")))
    with pytest.raises(IllegalAction, match="put four cards away"):
        state.apply(1, play(parse_card("AS")))
    # Any four of the twenty, even the best trumps.
    facts = state.apply(1, discard(parse_cards("AS KS 2C 3C")))
    assert facts == [CardsDiscarded(1, cards("AS KS 2C 3C"), (1,))]
    assert state.phase == "play" and state.to_act() == (1,) and len(state.hands[1]) == 16
    assert state.observation(1)["discarded"] == ["2C", "3C", "KS", "AS"]
    assert state.observation(0)["discarded"] == [] and state.observation(2)["discarded"] == []


BEAT_HANDS = {
    1: "AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H AS KS QS",
    2: "JS 10S 9S AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C 2C",
    0: "8S 7S 6S 5S 4S 3S 2S AD KD QD JD 10D 9D 8D 7D 6D",
}


def _play_state(contract: str, **options: Any) -> ThreeFiveEightState:
    """Seat 1 declares ``contract`` with ``BEAT_HANDS`` and leads the AH; seat 2 is void in it."""
    state = new_state(first_dealer=0, **options)
    state.deal(deck_order(0, BEAT_HANDS, talon="5D 4D 3D 2D"))
    state.apply(1, choose_contract(contract))
    state.apply(1, discard(parse_cards("5D 4D 3D 2D")))
    play_tricks(state, "AH")
    return state


def test_trump_beat_off_a_void_player_plays_any_card() -> None:
    state = _play_state("S", trump_beat=False)
    assert len(state.legal_actions(2)) == 16
    state.apply(2, play(parse_card("2C")))
    assert len(state.legal_actions(0)) == 16


def test_trump_beat_is_off_by_default() -> None:
    state = _play_state("S")
    assert state.legal_actions(2) == [play(card) for card in sorted(state.hands[2])]
    assert state.why_illegal(2, play(parse_card("AC"))) is None
    state.apply(2, play(parse_card("AC")))


def test_trump_beat_on_a_void_player_must_trump_but_need_not_overtrump() -> None:
    state = _play_state("S", trump_beat=True)
    assert state.legal_actions(2) == [play(card) for card in cards("9S 10S JS")]
    with pytest.raises(IllegalAction, match="you cannot follow hearts, so you must play a trump"):
        state.apply(2, play(parse_card("AC")))
    state.apply(2, play(parse_card("JS")))
    # Seat 0 may play a lower trump than JS: no duty to beat.
    assert parse_card("2S") in [action.card for action in state.legal_actions(0)]
    assert len(state.legal_actions(0)) == 7
    facts = state.apply(0, play(parse_card("2S")))
    assert isinstance(facts[-1], TrickWon) and facts[-1].seat == 2


def test_trump_beat_has_no_effect_without_trump() -> None:
    state = _play_state("NT", trump_beat=True)
    assert len(state.legal_actions(2)) == 16


def test_follow_suit_without_duty_to_beat() -> None:
    state = _play_state("S", trump_beat=False)
    state.apply(2, play(parse_card("2C")))
    state.apply(0, play(parse_card("2S")))  # a trump wins the trick
    assert state.tricks_won == [1, 0, 0] and state.to_act() == (0,)
    state.apply(0, play(parse_card("8S")))
    assert state.legal_actions(1) == [play(card) for card in cards("QS KS AS")]
    with pytest.raises(IllegalAction, match="you must follow spades"):
        state.apply(1, play(parse_card("2H")))
    with pytest.raises(IllegalAction, match="you do not hold AD"):
        state.apply(1, play(parse_card("AD")))
    state.apply(1, play(parse_card("AS")))
    # Seat 2 may follow with a spade lower than the ace.
    assert parse_card("9S") in [action.card for action in state.legal_actions(2)]


# -- bad input -------------------------------------------------------------------------------


def test_bad_input_is_rejected() -> None:
    with pytest.raises(InvalidInput):
        parse_cards("AS 1X")
    with pytest.raises(InvalidInput, match="3-5-8 is played by 3 players"):
        THREE_FIVE_EIGHT.new_game(4)
    with pytest.raises(InvalidInput, match="unknown option"):
        THREE_FIVE_EIGHT.new_game(3, {"must_trump": "true"})
    with pytest.raises(InvalidInput, match="trump_beat takes true or false"):
        THREE_FIVE_EIGHT.new_game(3, {"trump_beat": "maybe"})
    state = new_state()
    with pytest.raises(IllegalAction, match="not been dealt"):
        state.apply(1, choose_contract("S"))
    with pytest.raises(InvalidInput, match="each of the game's 52 cards"):
        state.deal([*FULL_DECK[:-1], FULL_DECK[0]])
    state.deal(FULL_DECK)
    with pytest.raises(IllegalAction, match="already dealt"):
        state.deal(FULL_DECK)
    with pytest.raises(IllegalAction, match="not your turn: waiting for seat 1"):
        state.apply(0, choose_contract("S"))
    with pytest.raises(IllegalAction, match="time to choose the contract"):
        state.apply(1, play(parse_card("2C")))
    with pytest.raises(IllegalAction, match="no seat 5"):
        state.apply(5, choose_contract("S"))
    assert parse_action("contract nt") == choose_contract("NT")


def _snapshot_in_play() -> dict[str, Any]:
    state = new_state(first_dealer=0)
    state.deal(deck_order(0, TRUMP_EXAMPLE_HANDS, talon="5S 4S 3S 2S"))
    state.apply(1, choose_contract("S"))
    state.apply(1, discard(parse_cards("5S 4S 3S 2S")))
    play_tricks(state, "AS 2H 2D", "KS 3H")
    return state.to_snapshot()


def _tamper_hand(data: dict[str, Any]) -> None:
    data["state"]["hands"][0][0] = data["state"]["hands"][1][0]


def _tamper_winner(data: dict[str, Any]) -> None:
    data["state"]["tricks"][0]["winner"] = 2
    data["state"]["tricks_won"] = [0, 0, 1]


TAMPERINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "duplicate card": _tamper_hand,
    "unknown card": lambda data: data["state"]["trick"].__setitem__(0, "1X"),
    "bad phase": lambda data: data["state"].__setitem__("phase", "bidding"),
    "bad contract": lambda data: data["state"].__setitem__("contract", "XX"),
    "repeated contract": lambda data: data["state"]["used_contracts"][1].append("S"),
    "contract not used": lambda data: data["state"].__setitem__("used_contracts", [[], ["H"], []]),
    "tricks won": lambda data: data["state"].__setitem__("tricks_won", [0, 2, 0]),
    "false winner": _tamper_winner,
    "player out of turn": lambda data: data["state"].__setitem__("player", 1),
    "dealer": lambda data: data.__setitem__("dealer", 2),
    "exchange in play": lambda data: data["state"].__setitem__("exchange_queue", [[1, 0, 1]]),
    "exchange phase": lambda data: data["state"].__setitem__("phase", "exchange"),
    "no discard": lambda data: data["state"].__setitem__("discarded", []),
    "hands not a list": lambda data: data["state"].__setitem__("hands", "AS"),
    "missing field": lambda data: data["state"].pop("talon"),
    "totals": lambda data: data.__setitem__("totals", [1, 0, 0]),
    "over": lambda data: data.__setitem__("over", True),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_snapshot_is_rejected(name: str) -> None:
    data = _snapshot_in_play()
    ThreeFiveEightState.from_snapshot(data)  # the untouched snapshot loads
    TAMPERINGS[name](data)
    with pytest.raises(InvalidInput):
        ThreeFiveEightState.from_snapshot(data)


def test_tampered_contract_phase_snapshot_is_rejected() -> None:
    state = new_state()
    state.deal(FULL_DECK)
    data = state.to_snapshot()
    data["state"]["first_cards"][0] = data["state"]["first_cards"][1]
    with pytest.raises(InvalidInput, match="first cards"):
        ThreeFiveEightState.from_snapshot(data)


# -- random games ----------------------------------------------------------------------------


def _observed_cards(value: Any) -> set[Card]:
    """Every card named anywhere in an observation."""
    found: set[Card] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _observed_cards(item)
    elif isinstance(value, list):
        for item in value:
            found |= _observed_cards(item)
    elif isinstance(value, str):
        for word in value.split():
            with contextlib.suppress(InvalidInput):
                found.add(parse_card(word))
    return found


_CARD_FIELDS: dict[type, tuple[tuple[int, bool], ...]] = {}


def _fact_cards(fact: Fact) -> set[Card]:
    """The cards a fact names, by the field naming rule of ``facts.py``."""
    fields = _CARD_FIELDS.get(type(fact))
    if fields is None:
        fields = tuple(
            (index, name == "cards" or name.endswith("_cards"))
            for index, name in enumerate(fact._fields)
            if name in ("card", "cards") or name.endswith(("_card", "_cards"))
        )
        _CARD_FIELDS[type(fact)] = fields
    found: set[Card] = set()
    for index, several in fields:
        if several:
            found.update(fact[index])
        else:
            found.add(fact[index])
    return found


def _check_fact_audience(state: ThreeFiveEightState, fact: Fact) -> None:
    """Private cards go only to the seats the rules name."""
    if isinstance(fact, CardsDealt):
        assert fact.audience == (fact.seat,)
    elif isinstance(fact, TalonTaken | CardsDiscarded):
        assert fact.audience == (state.declarer,) and fact.seat == state.declarer
    elif isinstance(fact, CardsExchanged):
        assert fact.audience == (fact.seat, fact.to_seat)
    else:
        assert fact.audience is None


def _candidates(state: ThreeFiveEightState, seat: int, rng: random.Random) -> list[Action]:
    candidates: list[Action] = [play(card) for card in FULL_DECK]
    candidates += [give(card) for card in FULL_DECK]
    candidates += [choose_contract(contract) for contract in (*CONTRACTS, "XX")]
    candidates += [TAKE, PASS_BID, bid(2)]
    hand = state.hands[seat]
    for _ in range(6):
        candidates.append(discard(rng.sample(hand, min(4, len(hand)))) if hand else discard([]))
        candidates.append(discard(rng.sample(FULL_DECK, 4)))
    return candidates


def _check_legal_matches_why_illegal(state: ThreeFiveEightState, rng: random.Random) -> None:
    for seat in range(3):
        legal = state.legal_actions(seat)
        legal_set = set(legal)
        assert len(legal_set) == len(legal)
        assert all(state.why_illegal(seat, action) is None for action in legal)
        for action in _candidates(state, seat, rng):
            assert (state.why_illegal(seat, action) is None) == (action in legal_set), action
        if state.phase == "discard" and seat == state.player:
            expected = {discard(chosen) for chosen in combinations(state.hands[seat], 4)}
            assert legal_set == expected


def _check_observations(state: ThreeFiveEightState, known: list[set[Card]]) -> None:
    """Observations name only cards the seat was shown by facts it may see."""
    public = known[3]
    for seat in (0, 1, 2, None):
        observation = state.observation(seat)
        allowed = public if seat is None else known[seat] | public
        assert _observed_cards(observation) <= allowed, seat
        if seat is not None:
            expected = state.first_cards[seat] if state.phase == "contract" else state.hands[seat]
            assert observation["hand"] == card_texts(expected)


def _check_round_trip(state: ThreeFiveEightState, rng: random.Random) -> None:
    """A snapshot and a clone continue exactly like the original; the clone is independent."""
    snapshot = state.to_snapshot()
    restored = ThreeFiveEightState.from_snapshot(snapshot)
    assert restored.to_snapshot() == snapshot
    cloned = state.clone()
    seat = state.to_act()[0]
    action = random_action(state, seat, random.Random(rng.random()))
    expected = state.clone().apply(seat, action)
    assert cloned.to_snapshot() == snapshot  # untouched by the copy that moved on
    assert restored.apply(seat, action) == expected
    assert cloned.apply(seat, action) == expected
    assert restored.to_snapshot() == cloned.to_snapshot()
    assert state.to_snapshot() == snapshot


def _run_random_game(game_index: int, heavy_rate: float) -> tuple[int, ...]:
    rng = random.Random(game_index)
    state = new_state(first_dealer=rng.randrange(3), trump_beat=rng.random() < 0.5)
    known: list[set[Card]] = [set(), set(), set(), set()]  # per seat, and public
    previous: tuple[int, ...] | None = None
    exchanges_made = 0
    while not state.is_over():
        assert state.progress() == len(state.deal_scores) / 18
        if state.needs_deal():
            order = shuffled(rng)
            facts = state.deal(order)
            known = [set(), set(), set(), set()]
            previous = state.deal_scores[-1] if state.deal_scores else None
            exchanges_made = 0
        else:
            seat_to_act = state.to_act()
            assert len(seat_to_act) == 1
            seat = seat_to_act[0]
            choice = state.card_set_choice(seat)
            if choice is None:
                assert state.legal_actions(seat), "a seat to act always has a legal action"
            else:
                assert len(choice.cards) == 20 and choice.count == 4
            # The short phases (contract, exchange, discard) are checked more often.
            if rng.random() < (heavy_rate if state.phase == "play" else 10 * heavy_rate):
                _check_legal_matches_why_illegal(state, rng)
                _check_round_trip(state, rng)
            action = random_action(state, seat, rng)
            giving = state.phase == "exchange"
            debtor_hand = list(state.hands[state.exchange_queue[0][1]]) if giving else []
            facts = state.apply(seat, action)
            for fact in facts:
                if isinstance(fact, CardsExchanged):
                    exchanges_made += 1
                    # The debtor returns its highest card of the suit, the one received included.
                    suit = SUIT_OF[fact.given_card]
                    same_suit = [c for c in [*debtor_hand, fact.given_card] if SUIT_OF[c] == suit]
                    assert fact.returned_card == max(same_suit)
                if isinstance(fact, ExchangesSkipped):
                    exchanges_made += fact.number
                if isinstance(fact, TalonTaken) and state.trump >= 0 and previous:
                    # Every point of credit was settled or skipped before the talon.
                    assert exchanges_made == sum(score for score in previous if score > 0)
                if isinstance(fact, TrickWon):
                    assert len(fact.cards) == 3
                    assert {(fact.leader + offset) % 3 for offset in range(3)} == {0, 1, 2}
                if isinstance(fact, DealScored):
                    assert sum(fact.scores) == 0
                    assert sum(state.tricks_won) == 16
                    played = [card for _, trick, _ in state.tricks for card in trick]
                    everything = played + list(state.discarded)
                    assert sorted(everything) == list(FULL_DECK)
        for fact in facts:
            _check_fact_audience(state, fact)
            for seat in range(3):
                if visible_to(fact, seat):
                    known[seat] |= _fact_cards(fact)
            if visible_to(fact, None):
                known[3] |= _fact_cards(fact)
        if not state.is_over() and not state.needs_deal() and rng.random() < heavy_rate:
            _check_observations(state, known)
    assert len(state.deal_scores) == 18
    assert state.totals == [sum(scores[seat] for scores in state.deal_scores) for seat in range(3)]
    assert [sorted(used) for used in state.used] == [sorted(CONTRACTS)] * 3
    assert facts[-1] == GameEnded(tuple(state.totals), places_by_total(state.totals))
    assert state.places() == places_by_total(state.totals)
    return tuple(state.totals)


def test_random_games_keep_every_invariant() -> None:
    totals = [_run_random_game(game_index, heavy_rate=0.003) for game_index in range(100)]
    assert any(len(set(game)) < 3 for game in totals), "some game ends in a tie"


def test_every_card_dealt_exactly_once() -> None:
    rng = random.Random(99)
    for first_dealer in range(3):
        state = new_state(first_dealer=first_dealer)
        order = shuffled(rng)
        facts = state.deal(order)
        facts += state.apply(state.declarer, choose_contract("NT"))
        dealt = [card for fact in facts if isinstance(fact, CardsDealt) for card in fact.cards]
        assert sorted(dealt + list(state.talon)) == list(FULL_DECK)
        assert sorted(state.talon) == sorted(order[48:])
        assert set(order[0:48:3]) <= set(state.hands[(first_dealer + 1) % 3])
