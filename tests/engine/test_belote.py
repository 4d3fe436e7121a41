"""Belote scenarios (docs/rules.md, Belote) and a random-playout property test.

Seats 0 and 2 play against seats 1 and 3; play goes to the right: 0, 3, 2, 1. Most scenarios
have seat 0 deal, so seat 3 bids first and seat 0 leads the first trick.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from cardtable.engine.actions import PASS_BID, PLAY, TAKE, Action, name_trump, parse_action
from cardtable.engine.cards import HEARTS, SPADES, Card, card_texts, parse_card, parse_cards
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.facts import (
    CardPlayed,
    CardsDealt,
    CardTurnedUp,
    DealScored,
    DealStarted,
    GameEnded,
    TrickWon,
    TrumpChosen,
)
from cardtable.engine.games.belote.rules import (
    BELOTE,
    DECK,
    NAME_ACTIONS,
    BeloteScored,
    BeloteState,
    CapotMade,
    ContractSettled,
    DealThrownIn,
    TrumpBidMade,
    TurnedCardTaken,
    team_scores,
)

# -- helpers ---------------------------------------------------------------------------------


def deck_for(dealer: int, hands: Sequence[str], turned: str, taker: int) -> list[Card]:
    """The deck order that deals ``hands`` (seat by seat, 8 cards each) when ``taker`` takes.

    Inverts the dealing order of the module docstring: each hand's first three cards come in
    the first round, the next two in the second, the rest in the completion; the taker's hand
    lists the turned card too, which is not dealt from the deck to it.
    """
    turned_card = parse_card(turned)
    cards = {seat: [c for c in parse_cards(hands[seat]) if c != turned_card] for seat in range(4)}
    assert all(len(cards[seat]) == (7 if seat == taker else 8) for seat in range(4)), cards
    seats = [(dealer - 1 - position) % 4 for position in range(4)]
    order = [card for seat in seats for card in cards[seat][0:3]]
    order += [card for seat in seats for card in cards[seat][3:5]]
    order.append(turned_card)
    for seat in seats:
        order += cards[seat][5 : 5 + (2 if seat == taker else 3)]
    assert sorted(order) == sorted(DECK)
    return order


def dealt(dealer: int, hands: Sequence[str], turned: str, taker: int) -> BeloteState:
    state = BELOTE.new_game(4, {}, first_dealer=dealer)
    assert isinstance(state, BeloteState)
    state.deal(deck_for(dealer, hands, turned, taker))
    return state


def take_at(state: BeloteState, taker: int) -> list[Any]:
    """Everybody before ``taker`` passes in round 1, then ``taker`` takes."""
    while state.to_act() != (taker,):
        state.apply(state.to_act()[0], PASS_BID)
    return state.apply(taker, TAKE)


def play_tricks(state: BeloteState, tricks: Sequence[str]) -> list[Any]:
    """Play the cards of each trick in play order, each by the seat to act; return the facts."""
    facts: list[Any] = []
    for trick in tricks:
        for card in parse_cards(trick):
            facts += state.apply(state.to_act()[0], PLAY[card])
    return facts


def legal_cards(state: BeloteState, seat: int) -> set[str]:
    return {str(action).split()[1] for action in state.legal_actions(seat)}


def of_kind(facts: Sequence[Any], kind: type) -> list[Any]:
    return [fact for fact in facts if isinstance(fact, kind)]


def why(state: BeloteState, seat: int, text: str) -> str | None:
    return state.why_illegal(seat, parse_action(text))


# Example deal: seat 0 deals and takes hearts (turned KH) with belote. Everyone holds two cards of
# each suit, so every trick follows suit; seat 0 wins six side-suit tricks (90), seat 3 the two
# last trump tricks (72 with the last trick's 10).
MADE_HANDS = (
    "KH QH AS 10S AC 10C AD 10D",
    "8H 7H 8S 7S 8C 7C 8D 7D",
    "AH 10H JS 9S JC 9C JD 9D",
    "JH 9H KS QS KC QC KD QD",
)
MADE_TRICKS = (
    "AS KS JS 8S",  # 17 to seat 0
    "10S QS 9S 7S",  # 13
    "AC KC JC 8C",  # 17
    "10C QC 9C 7C",  # 13
    "AD KD JD 8D",  # 17
    "10D QD 9D 7D",  # 13: 90 for seats 0 and 2
    "KH 9H 10H 8H",  # 28 to seat 3
    "JH AH 7H QH",  # 34 + 10 for the last trick: 72 for seats 1 and 3
)


def made_deal(dealer_state: BeloteState | None = None) -> tuple[BeloteState, list[Any]]:
    state = dealer_state or BELOTE.new_game(4, {}, first_dealer=0)
    assert isinstance(state, BeloteState) and state.dealer in (0, 1)
    state.deal(deck_for(0, MADE_HANDS, "KH", taker=0))
    assert state.dealer == 0
    take_at(state, 0)
    return state, play_tricks(state, MADE_TRICKS)


# -- dealing ---------------------------------------------------------------------------------


def test_deal_order_is_the_documented_one() -> None:
    state = BELOTE.new_game(4, {}, first_dealer=1)
    assert isinstance(state, BeloteState)
    order = list(reversed(DECK))
    facts = state.deal(order)
    # Dealer 1: seat 0 is its right, then 3, 2 and the dealer 1.
    expected = {
        0: order[0:3] + order[12:14],
        3: order[3:6] + order[14:16],
        2: order[6:9] + order[16:18],
        1: order[9:12] + order[18:20],
    }
    for seat, cards in expected.items():
        assert state.hands[seat] == sorted(cards)
    assert facts[0] == DealStarted(1, 1, 8)
    assert [(fact.seat, fact.audience) for fact in of_kind(facts, CardsDealt)] == [
        (0, (0,)),
        (3, (3,)),
        (2, (2,)),
        (1, (1,)),
    ]
    assert facts[-1] == CardTurnedUp(order[20])
    assert state.turned_card == order[20] and state.to_act() == (0,)
    # Seat 3 takes: completion from order[21], from the dealer's right, 2 to the taker.
    state.apply(0, PASS_BID)
    facts = state.apply(3, TAKE)
    assert TurnedCardTaken(3, order[20]) in facts
    completion = {fact.seat: list(fact.cards) for fact in of_kind(facts, CardsDealt)}
    assert completion == {0: order[21:24], 3: order[24:26], 2: order[26:29], 1: order[29:32]}
    assert all(fact.audience == (fact.seat,) for fact in of_kind(facts, CardsDealt))
    assert state.hands[3] == sorted(expected[3] + order[24:26] + [order[20]])
    assert [len(hand) for hand in state.hands] == [8, 8, 8, 8]
    assert state.to_act() == (1,)  # the dealer leads the first trick


def test_deck_for_helper_deals_the_hands_asked_for() -> None:
    state = dealt(0, MADE_HANDS, "KH", taker=0)
    take_at(state, 0)
    for seat in range(4):
        assert state.hands[seat] == sorted(parse_cards(MADE_HANDS[seat]))


# -- bidding ---------------------------------------------------------------------------------


def test_round_one_take() -> None:
    state = BELOTE.new_game(4, {}, first_dealer=0)
    assert isinstance(state, BeloteState)
    state.deal(DECK)
    assert state.phase == "bid" and state.bid_round == 1
    assert state.to_act() == (3,)  # the dealer's right speaks first
    assert state.legal_actions(3) == [TAKE, PASS_BID]
    assert why(state, 3, "name S") == "in the first round you may only take hearts as trump or pass"
    assert why(state, 3, "play JH") == "it is time to take hearts as trump or pass"
    with pytest.raises(IllegalAction, match="it is not your turn"):
        state.apply(2, TAKE)
    facts = state.apply(3, PASS_BID)
    assert facts == [TrumpBidMade(3, 1, "pass")]
    facts = state.apply(2, TAKE)
    assert TrumpChosen("H", 2) in facts
    assert state.trump == HEARTS and state.taker == 2 and state.phase == "play"
    assert state.to_act() == (0,)


def test_round_two_names_another_suit() -> None:
    # Seat 1 names spades in round 2; it still takes the turned card (JH) and two more.
    order = list(DECK)
    state = BELOTE.new_game(4, {}, first_dealer=0)
    assert isinstance(state, BeloteState)
    state.deal(order)
    for seat in (3, 2, 1, 0):
        state.apply(seat, PASS_BID)
    assert state.bid_round == 2 and state.to_act() == (3,)
    assert state.legal_actions(3) == [NAME_ACTIONS[0], NAME_ACTIONS[1], NAME_ACTIONS[3], PASS_BID]
    assert why(state, 3, "take") == "everybody refused hearts: name another suit as trump or pass"
    assert why(state, 3, "name H") == "hearts was refused in the first round: name another suit"
    assert why(state, 3, "name X") == "name a suit as trump: C, D, H or S"
    assert why(state, 3, "play KS") == "it is time to name a trump suit or pass"
    state.apply(3, PASS_BID)
    state.apply(2, PASS_BID)
    facts = state.apply(1, name_trump("s"))
    assert TrumpBidMade(1, 2, "name S") in facts and TrumpChosen("S", 1) in facts
    assert state.trump == SPADES and state.taker == 1
    # Completion from order[21]: seat 3 three, seat 2 three, seat 1 (taker) two, seat 0 three.
    assert state.hands[1] == sorted(order[6:9] + order[16:18] + order[27:29] + [order[20]])
    assert state.hands[0] == sorted(order[9:12] + order[18:20] + order[29:32])
    assert state.to_act() == (0,)


def test_all_pass_twice_throws_the_cards_in_and_the_next_dealer_deals() -> None:
    state = dealt(0, MADE_HANDS, "KH", taker=0)
    facts: list[Any] = []
    for _ in range(8):
        facts += state.apply(state.to_act()[0], PASS_BID)
    assert DealThrownIn(1, 0) in facts
    assert DealScored(1, (0, 0, 0, 0), (0, 0, 0, 0)) in facts
    assert state.needs_deal() and state.phase == "deal" and not state.is_over()
    assert state.deal_scores == [(0, 0, 0, 0)] and state.totals == [0, 0, 0, 0]
    assert state.observation(2)["hand"] == []
    state.deal(DECK)
    assert state.deal_number == 2 and state.dealer == 3  # the deal passes to the right
    assert state.to_act() == (2,)


# -- play --------------------------------------------------------------------------------


def test_trump_led_must_be_overtrumped_if_possible() -> None:
    state = dealt(
        0,
        [
            "10H AS KS QS JS 10S 9S 8S",
            "AH KH 7S 9C 8C 7C 8D 7D",
            "QH 9H AD KD QD JD 10D 9D",
            "JH 8H 7H AC KC QC JC 10C",
        ],
        "7H",
        taker=3,
    )
    take_at(state, 3)
    play_tricks(state, ["10H"])
    assert legal_cards(state, 3) == {"JH"}
    assert why(state, 3, "play 8H") == "you must play a higher trump"
    assert why(state, 3, "play AC") == "you must follow hearts"
    with pytest.raises(IllegalAction, match="you must play a higher trump"):
        state.apply(3, PLAY[parse_card("8H")])
    play_tricks(state, ["JH"])
    # Nothing beats the jack: any trump, but a trump.
    assert legal_cards(state, 2) == {"QH", "9H"}
    assert why(state, 2, "play AD") == "you must follow hearts"
    play_tricks(state, ["9H"])
    # Seat 1's partner is winning, but trump was led: it must still play trump.
    assert legal_cards(state, 1) == {"AH", "KH"}
    assert why(state, 1, "play 7S") == "you must follow hearts"
    facts = play_tricks(state, ["KH"])
    assert of_kind(facts, TrickWon) == [TrickWon(1, 0, 3, tuple(parse_cards("10H JH 9H KH")), 48)]


def test_void_must_trump_and_overtrump_when_an_opponent_wins() -> None:
    state = dealt(
        0,
        [
            "AS KS QS JS 10S 9S 8S 7S",
            "AH 10H KH QH 8C 7C 8D 7D",
            "9H 7H AD KD QD JD 10D 9D",
            "JH 8H AC KC QC JC 10C 9C",
        ],
        "8H",
        taker=3,
    )
    take_at(state, 3)
    play_tricks(state, ["AS"])
    # Seat 3 is void in spades and its opponent wins: any trump, and only a trump.
    assert legal_cards(state, 3) == {"JH", "8H"}
    assert why(state, 3, "play AC") == "you must trump"
    play_tricks(state, ["8H"])
    # Seat 2 must go over the 8H with the 9H.
    assert legal_cards(state, 2) == {"9H"}
    assert why(state, 2, "play 7H") == "you must play a higher trump"
    assert why(state, 2, "play AD") == "you must trump"
    play_tricks(state, ["9H"])
    # Seat 1 cannot beat the 9H: any trump, still a trump.
    assert legal_cards(state, 1) == {"AH", "10H", "KH", "QH"}
    assert why(state, 1, "play 7C") == "you must trump"
    play_tricks(state, ["AH"])
    assert state.to_act() == (2,)
    play_tricks(state, ["AD"])
    assert legal_cards(state, 1) == {"8D", "7D"}
    assert why(state, 1, "play KH") == "you must follow diamonds"
    play_tricks(state, ["7D"])
    # Seat 0 is void in diamonds but its partner wins: any card.
    assert len(legal_cards(state, 0)) == 7
    play_tricks(state, ["7S"])
    assert legal_cards(state, 3) == {"JH"}


def test_partner_winning_relaxes_the_duty_to_trump() -> None:
    state = dealt(
        0,
        [
            "AS KS QS JS 10S 9S 8S 7S",
            "AH 10H KH QH 8C 7C 8D 7D",
            "9H 8H AD KD QD JD 10D 9D",
            "JH 7H AC KC QC JC 10C 9C",
        ],
        "7H",
        taker=3,
    )
    take_at(state, 3)
    play_tricks(state, ["AS", "JH"])
    # The jack cannot be beaten: seat 2 must still trump, with either trump.
    assert legal_cards(state, 2) == {"9H", "8H"}
    assert why(state, 2, "play AD") == "you must trump"
    play_tricks(state, ["8H"])
    # Seat 1's partner (seat 3) wins: seat 1 may discard although it holds trumps.
    assert legal_cards(state, 1) == set(card_texts(state.hands[1]))
    assert why(state, 1, "play 7C") is None
    facts = play_tricks(state, ["7C"])
    assert of_kind(facts, TrickWon)[0].seat == 3


# Seat 0 takes hearts (turned KH) with belote, and the defenders win every trick: seat 3 with its
# four top trumps and two spades, seat 1 with the ace of diamonds and then its clubs and 10D.
DEFENDERS_CAPOT_HANDS = (
    "KH QH 9S 8S 7S JC 9C 8C",
    "AC 10C KC QC AD 10D KD QD",
    "8H 7H QS JS 7C JD 9D 8D",
    "JH 9H AH 10H AS 10S KS 7D",
)
DEFENDERS_CAPOT_TRICKS = (
    "9S AS JS QD",
    "JH 7H QC QH",
    "9H 8H KD KH",
    "AH 7C KC 8C",
    "7D 8D AD 9C",
    "AC JC 10S JD",
    "10D 8S KS 9D",
    "10C 7S 10H QS",
)


def defenders_capot_deal() -> BeloteState:
    state = dealt(0, DEFENDERS_CAPOT_HANDS, "KH", taker=0)
    take_at(state, 0)
    return state


def test_void_without_trump_plays_any_card_when_an_opponent_wins() -> None:
    state = defenders_capot_deal()
    play_tricks(state, [*DEFENDERS_CAPOT_TRICKS[:4], "7D 8D AD"])
    # Seat 0 has no diamond and no trump left; seat 1's AD beats its partner's 8D.
    assert state.to_act() == (0,)
    assert legal_cards(state, 0) == {"8S", "7S", "JC", "9C"}
    assert why(state, 0, "play 8S") is None
    assert why(state, 0, "play JC") is None


def test_trump_led_without_trump_plays_any_card() -> None:
    state = defenders_capot_deal()
    play_tricks(state, [*DEFENDERS_CAPOT_TRICKS[:3], "AH"])
    # Seat 2 has no trump left, and seat 3, an opponent, leads.
    assert state.to_act() == (2,)
    assert legal_cards(state, 2) == {"QS", "7C", "JD", "9D", "8D"}
    assert why(state, 2, "play QS") is None
    assert why(state, 2, "play 7C") is None


# -- scoring -----------------------------------------------------------------------------


def test_worked_examples_of_the_rules() -> None:
    # docs/rules.md, worked examples: (card points of takers, defenders), takers' belote.
    assert team_scores(0, (90, 72), (20, 0), (0, 0)) == ((110, 72), True)
    assert team_scores(0, (70, 92), (20, 0), (0, 0)) == ((20, 162), False)
    assert team_scores(0, (81, 81), (0, 0), (0, 0)) == ((0, 162), False)
    assert team_scores(1, (81, 81), (0, 0), (0, 0)) == ((162, 0), False)
    # The defenders' belote stays with them when the contract fails.
    assert team_scores(1, (100, 62), (20, 0), (0, 0)) == ((182, 0), False)


def test_contract_made_with_belote_is_the_first_worked_example() -> None:
    state, facts = made_deal()
    belote = of_kind(facts, BeloteScored)
    assert belote == [BeloteScored(0, 20)] and belote[0].audience is None
    assert sum(fact.points for fact in of_kind(facts, TrickWon)) == 162
    assert of_kind(facts, ContractSettled) == [ContractSettled(0, True, 110, 72)]
    assert of_kind(facts, DealScored) == [DealScored(1, (110, 72, 110, 72), (110, 72, 110, 72))]
    assert state.totals == [110, 72, 110, 72] and state.needs_deal()


def test_belote_is_not_revealed_before_the_deal_is_scored() -> None:
    state = dealt(0, MADE_HANDS, "KH", taker=0)
    facts = take_at(state, 0)
    assert state.belote_seat == 0
    assert state.observation(0)["belote"] is True
    for seat in (1, 2, 3, None):
        assert state.observation(seat)["belote"] is False
    facts += play_tricks(state, MADE_TRICKS[:7])
    assert not of_kind(facts, BeloteScored)
    facts = play_tricks(state, MADE_TRICKS[7:])
    assert of_kind(facts, BeloteScored) == [BeloteScored(0)]


def test_failed_contract_is_the_second_worked_example() -> None:
    # Seat 0 takes hearts with belote but makes 70 against 92 (seat 3 trumps the ace of
    # diamonds): the defenders score all 162, the takers keep their belote.
    state = dealt(
        0,
        [
            "KH QH AS 10S AC 10C AD 10D",
            "7H 8S 7S 8C 7C KD QD 8D",
            "AH 10H JS 9S JC 9C JD 9D",
            "JH 9H 8H KS QS KC QC 7D",
        ],
        "KH",
        taker=0,
    )
    take_at(state, 0)
    facts = play_tricks(
        state,
        [
            "AS KS JS 8S",
            "10S QS 9S 7S",
            "AC KC JC 8C",
            "10C QC 9C 7C",
            "10D 7D 9D 8D",  # 10: 70 for the takers
            "AD 8H JD QD",  # seat 3 trumps: 16
            "JH 10H 7H QH",  # 33
            "9H AH KD KH",  # 33 + 10
        ],
    )
    assert [fact.seat for fact in of_kind(facts, TrickWon)] == [0, 0, 0, 0, 0, 3, 3, 3]
    assert of_kind(facts, ContractSettled) == [ContractSettled(0, False, 90, 92)]
    assert of_kind(facts, BeloteScored) == [BeloteScored(0)]
    assert of_kind(facts, DealScored)[0].scores == (20, 162, 20, 162)


def test_failed_contract_with_a_defenders_capot_scores_162_and_252() -> None:
    state = defenders_capot_deal()
    facts = play_tricks(state, DEFENDERS_CAPOT_TRICKS)
    assert [fact.seat for fact in of_kind(facts, TrickWon)] == [3, 3, 3, 3, 1, 1, 1, 3]
    assert of_kind(facts, CapotMade) == [CapotMade((1, 3), 252, None)]
    assert of_kind(facts, BeloteScored) == [BeloteScored(0)]
    assert of_kind(facts, ContractSettled) == [ContractSettled(0, False, 20, 162)]
    # The defenders: 162 + 252; the takers: their belote only.
    assert of_kind(facts, DealScored)[0].scores == (20, 414, 20, 414)


def test_capot_by_a_team_scores_252_more() -> None:
    state = dealt(
        0,
        [
            "JH 9H AH 10H KH 8H 7H 7S",
            "9S 8S 10C JC 9C 8C 7C 7D",
            "QH AS AD AC KD KC QD QC",
            "KS QS JS 10S 10D JD 9D 8D",
        ],
        "7H",
        taker=0,
    )
    take_at(state, 0)
    facts = play_tricks(
        state,
        [
            "JH 10D QH 7D",
            "9H JD AD 7C",
            "AH 9D KD 8C",
            "10H 8D QD 9C",
            "KH 10S AC 10C",
            "8H JS KC JC",
            "7H QS QC 8S",
            "7S KS AS 9S",  # seat 2 wins the last trick: a team capot, not a solo one
        ],
    )
    assert of_kind(facts, CapotMade) == [CapotMade((0, 2), 252, None)]
    assert not of_kind(facts, BeloteScored)
    assert of_kind(facts, DealScored)[0].scores == (414, 0, 414, 0)


def test_solo_capot_scores_350_and_can_end_the_game() -> None:
    state = dealt(
        0,
        [
            "JH 9H AH 10H KH QH 8H 7H",
            "AD KD QD JD 10D 9D 8D 7D",
            "AC KC QC JC 10C 9C 8C 7C",
            "AS KS QS JS 10S 9S 8S 7S",
        ],
        "7H",
        taker=0,
    )
    take_at(state, 0)
    # Seat 0 leads its hearts; seats 3, 2 and 1 (void) throw spades, clubs and diamonds.
    facts = play_tricks(
        state,
        [
            "JH AS AC AD",
            "9H KS KC KD",
            "AH QS QC QD",
            "10H JS JC JD",
            "KH 10S 10C 10D",
            "QH 9S 9C 9D",
            "8H 8S 8C 8D",
            "7H 7S 7C 7D",
        ],
    )
    assert of_kind(facts, CapotMade) == [CapotMade((0, 2), 350, 0)]
    assert of_kind(facts, BeloteScored) == [BeloteScored(0)]
    # 162 card points + 350 + belote: past 501 in one deal.
    assert of_kind(facts, DealScored)[0].scores == (532, 0, 532, 0)
    assert of_kind(facts, GameEnded) == [GameEnded((532, 0, 532, 0), (1, 3, 1, 3))]
    assert state.is_over() and state.places() == (1, 3, 1, 3) and state.progress() == 1.0


# -- the end -----------------------------------------------------------------------------


def with_totals(team_0: int, team_1: int) -> BeloteState:
    """A game after one deal with these team totals, seat 1 dealt, so seat 0 deals next."""
    snapshot = BELOTE.new_game(4, {}, first_dealer=1).to_snapshot()
    row = [team_0, team_1, team_0, team_1]
    snapshot.update(deal_number=1, deal_scores=[row], totals=row)
    return BeloteState.from_snapshot(snapshot)


def test_both_teams_past_501_the_higher_wins() -> None:
    state, facts = made_deal(with_totals(400, 450))  # + 110 and 72: 510 to 522
    assert state.totals == [510, 522, 510, 522]
    assert of_kind(facts, GameEnded) == [GameEnded((510, 522, 510, 522), (3, 1, 3, 1))]
    assert state.is_over() and state.to_act() == () and state.legal_actions(1) == []
    with pytest.raises(IllegalAction, match="the game is over"):
        state.deal(DECK)


@pytest.mark.parametrize(
    ("team_0", "team_1", "places"),
    [(391, 0, (1, 3, 1, 3)), (0, 429, (3, 1, 3, 1))],  # + 110 and 72: exactly 501
)
def test_a_team_reaching_exactly_501_wins(
    team_0: int, team_1: int, places: tuple[int, ...]
) -> None:
    state, facts = made_deal(with_totals(team_0, team_1))
    assert 501 in state.totals
    assert state.is_over() and state.places() == places
    assert of_kind(facts, GameEnded) == [GameEnded(tuple(state.totals), places)]


@pytest.mark.parametrize(
    ("team_0", "team_1", "totals"),
    [(390, 0, [500, 72, 500, 72]), (0, 428, [110, 500, 110, 500])],
)
def test_500_does_not_end_the_game(team_0: int, team_1: int, totals: list[int]) -> None:
    state, facts = made_deal(with_totals(team_0, team_1))
    assert state.totals == totals
    assert not state.is_over() and not of_kind(facts, GameEnded) and state.needs_deal()


def test_both_teams_level_past_501_play_another_deal() -> None:
    state, facts = made_deal(with_totals(402, 440))  # 512 each
    assert state.totals == [512, 512, 512, 512]
    assert not state.is_over() and not of_kind(facts, GameEnded) and state.needs_deal()
    assert state.progress() == 1.0
    state.deal(DECK)
    for _ in range(8):
        state.apply(state.to_act()[0], PASS_BID)
    assert not state.is_over() and state.deal_scores[-1] == (0, 0, 0, 0)


def test_progress_is_the_leading_total_over_501() -> None:
    state = with_totals(100, 250)
    assert state.progress() == pytest.approx(250 / 501)
    assert BELOTE.new_game(4).progress() == 0.0


# -- bad input ---------------------------------------------------------------------------


def test_bad_input_is_refused() -> None:
    with pytest.raises(InvalidInput):
        parse_cards("AS 11H")
    with pytest.raises(InvalidInput, match="4 players"):
        BELOTE.new_game(3)
    with pytest.raises(InvalidInput, match="unknown option"):
        BELOTE.new_game(4, {"quick": "true"})
    state = BELOTE.new_game(4)
    with pytest.raises(InvalidInput, match="32 cards"):
        state.deal(parse_cards("2C 3C"))
    with pytest.raises(InvalidInput):
        state.deal([*DECK[:-1], parse_card("2C")])
    with pytest.raises(IllegalAction, match="not been dealt"):
        state.apply(3, TAKE)
    state.deal(DECK)
    with pytest.raises(IllegalAction, match="already dealt"):
        state.deal(DECK)
    assert state.why_illegal(7, TAKE) == "there is no seat 7 at this table"
    with pytest.raises(IllegalAction, match="it is not your turn: waiting for seat 3"):
        state.apply(0, PASS_BID)
    state.apply(3, TAKE)
    assert state.why_illegal(0, TAKE) == "it is time to play a card"
    assert state.why_illegal(0, PLAY[parse_card("7C")]) == "you do not hold 7C"


def tampered(change: Any) -> dict[str, Any]:
    state = dealt(0, MADE_HANDS, "KH", taker=0)
    take_at(state, 0)
    play_tricks(state, [*MADE_TRICKS[:2], "AC KC"])
    snapshot = json.loads(json.dumps(state.to_snapshot()))
    change(snapshot, snapshot["state"])
    return snapshot  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "change",
    [
        lambda top, game: game["hands"][0].append("AS"),
        lambda top, game: game["hands"][1].__setitem__(0, "2C"),
        lambda top, game: game["tricks"][0].__setitem__("winner", 1),
        lambda top, game: game["tricks"][1].__setitem__("leader", 3),
        lambda top, game: game.__setitem__("trump", "S"),
        lambda top, game: game.__setitem__("taker", 2),
        lambda top, game: game["bids"][0].__setitem__("seat", 2),
        lambda top, game: game["bids"][0].__setitem__("bid", "take"),
        lambda top, game: game.__setitem__("player", 0),
        lambda top, game: game.__setitem__("phase", "over"),
        lambda top, game: game.__setitem__("phase", "bid"),
        lambda top, game: game.__setitem__("stock", ["7S"]),
        lambda top, game: game.pop("trick"),
        lambda top, game: game.__setitem__("turned_card", 5),
        lambda top, game: game.__setitem__("turned_card", "2C"),
        lambda top, game: game.__setitem__("turned_card", "QS"),
        lambda top, game: top.__setitem__("totals", [10, 0, 0, 0]),
        lambda top, game: top.update(deal_scores=[[10, 0, 0, 0]], totals=[10, 0, 0, 0]),
        lambda top, game: top.update(deal_scores=[[600, 0, 600, 0]], totals=[600, 0, 600, 0]),
        lambda top, game: top.__setitem__("deal_number", 3),
        lambda top, game: top.__setitem__("game", "hearts"),
    ],
)
def test_tampered_snapshots_are_refused(change: Any) -> None:
    with pytest.raises(InvalidInput):
        BeloteState.from_snapshot(tampered(change))


def test_snapshot_between_deals_must_be_empty() -> None:
    snapshot = BELOTE.new_game(4).to_snapshot()
    snapshot["state"]["hands"][0] = ["AS"]
    with pytest.raises(InvalidInput, match="no card"):
        BeloteState.from_snapshot(snapshot)


def test_snapshot_round_trip_mid_trick() -> None:
    snapshot = tampered(lambda top, game: None)
    state = BeloteState.from_snapshot(snapshot)
    assert state.to_snapshot() == snapshot
    assert state.winner == 0 and state.team_points == [30, 0] and state.belote_seat == 0
    assert legal_cards(state, 2) == {"JC", "9C"}


# -- random games ------------------------------------------------------------------------

CANDIDATES: list[Action] = [
    *(PLAY[card] for card in DECK),
    TAKE,
    PASS_BID,
    *NAME_ACTIONS,
    parse_action("play 2C"),
]


def strings_in(value: Any) -> set[str]:
    """Every string leaf of an observation."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(item) for item in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(strings_in(item) for item in value)) if value else set()
    return set()


def check_observations(state: BeloteState) -> None:
    public = {state.turned_card} if state.turned_card >= 0 else set()
    for seat in (0, 1, 2, 3, None):
        seen = strings_in(state.observation(seat))
        hidden = {card for other in range(4) if other != seat for card in state.hands[other]}
        hidden |= set(state.stock)
        assert not seen & set(card_texts(hidden - public)), (seat, seen)
        if seat is not None:
            assert state.observation(seat)["hand"] == card_texts(state.hands[seat])


def check_forks(state: BeloteState, rng: random.Random) -> None:
    """A restored snapshot and a clone continue exactly like the state; the clone is separate."""
    before = state.to_snapshot()
    restored = BeloteState.from_snapshot(json.loads(json.dumps(before)))
    assert restored.to_snapshot() == before
    clone = state.clone()
    probe = state.clone()
    for _ in range(rng.randrange(1, 12)):
        if probe.is_over():
            break
        if probe.needs_deal():
            order = list(DECK)
            rng.shuffle(order)
            expected = probe.deal(order)
            assert restored.deal(order) == expected == clone.deal(order)
            continue
        seat = probe.to_act()[0]
        action = rng.choice(probe.legal_actions(seat))
        expected = probe.apply(seat, action)
        assert restored.apply(seat, action) == expected == clone.apply(seat, action)
        assert restored.to_snapshot() == probe.to_snapshot()
    assert state.to_snapshot() == before


def play_random_game(rng: random.Random) -> None:
    state = BELOTE.new_game(4, {}, first_dealer=rng.randrange(4))
    assert isinstance(state, BeloteState)
    pass_weight = rng.choice([1, 6])  # some games pass a lot, to reach the throw-in
    given: list[Card] = []
    trick_cards: list[tuple[int, Card]] = []
    deal_points = 0
    steps = 0
    while not state.is_over():
        if state.needs_deal():
            assert state.to_act() == () and state.legal_actions(0) == []
            order = list(DECK)
            rng.shuffle(order)
            facts = state.deal(order)
            deal_points = 0
        else:
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            assert legal, "a seat to act always has a legal action"
            if steps % 3 == 0:
                allowed = [
                    action for action in CANDIDATES if state.why_illegal(seat, action) is None
                ]
                assert sorted(allowed) == sorted(legal)
                assert all(state.legal_actions(other) == [] for other in range(4) if other != seat)
            weights = [pass_weight if action is PASS_BID else 1 for action in legal]
            action = rng.choices(legal, weights)[0]
            facts = state.apply(seat, action)
        steps += 1
        for fact in facts:
            if isinstance(fact, CardsDealt):
                assert fact.audience == (fact.seat,)
                given += fact.cards
            elif isinstance(fact, CardTurnedUp | TurnedCardTaken):
                assert fact.audience is None
                if isinstance(fact, CardTurnedUp):
                    given.append(fact.card)
            elif isinstance(fact, DealThrownIn):
                given = []
            elif isinstance(fact, CardPlayed):
                trick_cards.append((fact.seat, fact.card))
            elif isinstance(fact, TrickWon):
                leader = fact.leader
                assert [seat for seat, _ in trick_cards] == [(leader - i) % 4 for i in range(4)]
                assert [card for _, card in trick_cards] == list(fact.cards)
                trick_cards = []
                deal_points += fact.points
            elif isinstance(fact, DealScored):
                check_deal_scored(state, facts, fact, deal_points)
            assert fact.audience is None or len(fact.audience) == 1
        if of_kind(facts, TrumpChosen):
            assert sorted(given) == sorted(DECK), "every card dealt exactly once"
            given = []
        if steps % 7 == 0:
            check_observations(state)
        if rng.random() < 0.03:
            check_forks(state, rng)
        if not state.is_over():
            assert 0.0 <= state.progress() <= 1.0
    team = state.totals[:2]
    assert max(team) >= 501 and team[0] != team[1]
    winner = team.index(max(team))
    assert state.places() == tuple(1 if seat % 2 == winner else 3 for seat in range(4))
    assert state.progress() == 1.0


def check_deal_scored(
    state: BeloteState, facts: list[Any], scored: DealScored, deal_points: int
) -> None:
    scores = scored.scores
    assert scores[0] == scores[2] and scores[1] == scores[3]
    assert list(scored.totals) == state.totals
    assert [sum(row[seat] for row in state.deal_scores) for seat in range(4)] == state.totals
    assert len(state.deal_scores) == scored.deal_number == state.deal_number
    if of_kind(facts, DealThrownIn):
        assert scores == (0, 0, 0, 0)
        return
    assert deal_points == 162
    belote = sum(fact.points for fact in of_kind(facts, BeloteScored))
    bonus = sum(fact.bonus for fact in of_kind(facts, CapotMade))
    assert scores[0] + scores[1] == 162 + belote + bonus
    settled = of_kind(facts, ContractSettled)[0]
    taker_team = settled.taker % 2
    if not settled.made:
        assert scores[1 - taker_team] >= 162


def test_random_games_keep_every_invariant() -> None:
    rng = random.Random(20240501)
    for _ in range(100):
        play_random_game(rng)
