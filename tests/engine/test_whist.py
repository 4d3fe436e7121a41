"""Whist scenarios (docs/rules.md, Whist) and a random-playout property harness.

Hands are set up by building the deck order that deals them: ``deck_order`` inverts the dealing
documented in ``cardtable.engine.games.whist.rules`` (card ``i`` goes to seat
``(dealer + 1 + i) % n``, then one card is turned up). ``play_rigged_deal`` deals a hand in
which one seat takes an exact number of tricks whatever the others do, which lets the streak
examples run through real deals.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from cardtable.engine.actions import BIDS, PASS_BID, PLAY, Action, bid, parse_action, play
from cardtable.engine.cards import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    SPADES,
    SUIT_OF,
    Card,
    format_card,
    format_cards,
    parse_card,
    parse_cards,
)
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.facts import (
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
    fact_to_dict,
)
from cardtable.engine.games.whist.rules import (
    WHIST,
    StreakBonus,
    WhistState,
    deal_score,
    deal_sizes,
    streak_step,
)
from cardtable.engine.ranking import places_from_totals
from cardtable.engine.registry import GAMES

Chooser = Callable[[int, list[Action]], Action]


# -- helpers ------------------------------------------------------------------------------
def new_game(players: int = 4, first_dealer: int = 0, **options: Any) -> WhistState:
    state = WHIST.new_game(players, options, first_dealer)
    assert isinstance(state, WhistState)
    return state


def next_deal(state: WhistState) -> tuple[int, int]:
    """The dealer and the cards each of the deal ``state`` waits for."""
    dealer = state.dealer if state.deal_number == 0 else (state.dealer + 1) % state.num_players
    return dealer, deal_sizes(state.num_players)[state.deal_number]


def deck_order(state: WhistState, hands: Sequence[str], turned: str | None = None) -> list[Card]:
    """The deck order that deals ``hands`` (one string per seat) and turns up ``turned``."""
    players = state.num_players
    dealer, cards_each = next_deal(state)
    parsed = [parse_cards(hand) for hand in hands]
    assert len(parsed) == players and all(len(hand) == cards_each for hand in parsed)
    order = [
        parsed[(dealer + 1 + index) % players][index // players]
        for index in range(cards_each * players)
    ]
    if turned is not None:
        order.append(parse_card(turned))
    order.extend(card for card in state.deck() if card not in order)
    return order


def first_legal(seat: int, legal: list[Action]) -> Action:
    return legal[0]


def bid_round(state: WhistState, bids: Mapping[int, int]) -> list[Fact]:
    """Everyone bids: the seats in ``bids`` as given, the others their first legal bid."""
    facts: list[Fact] = []
    while state.phase == "bid":
        seat = state.to_act()[0]
        action = BIDS[bids[seat]] if seat in bids else state.legal_actions(seat)[0]
        facts.extend(state.apply(seat, action))
    return facts


def play_deal(state: WhistState, choose: Chooser = first_legal) -> list[Fact]:
    """Play the tricks of the deal in progress to its end."""
    facts: list[Fact] = []
    while state.phase == "play":
        seat = state.to_act()[0]
        facts.extend(state.apply(seat, choose(seat, state.legal_actions(seat))))
    return facts


def skip_deals(state: WhistState, count: int) -> None:
    """Play ``count`` deals from the sorted deck, everyone taking their first legal action."""
    for _ in range(count):
        state.deal(state.deck())
        bid_round(state, {})
        play_deal(state)


def rigged_hands(state: WhistState, seat: int, tricks: int) -> tuple[list[str], str]:
    """Hands for the next deal (one with a trump) in which ``seat`` takes exactly ``tricks``.

    ``seat`` holds the ``tricks`` highest spades (trump) and the lowest hearts; nobody else holds
    a spade and someone else holds a higher heart. Playing its hearts first (``rigged_choice``)
    ``seat`` wins exactly the tricks where it plays a spade, whatever the others play.
    """
    players = state.num_players
    _, cards_each = next_deal(state)
    assert cards_each < 8

    def suit(which: int) -> list[Card]:
        return [card for card in state.deck() if SUIT_OF[card] == which]

    spades, hearts = suit(SPADES), suit(HEARTS)
    low = cards_each - tricks
    own = spades[len(spades) - tricks :] + hearts[:low]
    pool = iter(hearts[low:] + suit(CLUBS) + suit(DIAMONDS))
    hands = [
        own if other == seat else [next(pool) for _ in range(cards_each)]
        for other in range(players)
    ]
    return [format_cards(hand) for hand in hands], format_card(spades[0])


def rigged_choice(seat: int) -> Chooser:
    def choose(acting: int, legal: list[Action]) -> Action:
        if acting != seat:
            return legal[0]
        return min(legal, key=lambda action: SUIT_OF[action.card] == SPADES)

    return choose


def play_rigged_deal(state: WhistState, seat: int, bid_tricks: int, tricks: int) -> list[Fact]:
    """Deal, bid and play one deal in which ``seat`` bids ``bid_tricks`` and takes ``tricks``."""
    hands, turned = rigged_hands(state, seat, tricks)
    facts = state.deal(deck_order(state, hands, turned))
    facts += bid_round(state, {seat: bid_tricks})
    facts += play_deal(state, rigged_choice(seat))
    assert state.tricks_won[seat] == tricks
    return facts


def of_kind(facts: Sequence[Fact], kind: type) -> list[Any]:
    return [fact for fact in facts if isinstance(fact, kind)]


def seat_score(facts: Sequence[Fact], seat: int) -> int:
    (scored,) = of_kind(facts, DealScored)
    return int(scored.scores[seat])


# -- the worked examples (docs/rules.md, "Worked examples") ------------------------------------
@pytest.mark.parametrize(
    ("bid_tricks", "tricks", "score"),
    [(3, 3, 8), (3, 2, -1), (3, 4, -1), (3, 1, -2), (3, 5, -2), (3, 0, -3), (3, 6, -3), (0, 0, 5)],
)
def test_worked_example_deal_score(bid_tricks: int, tricks: int, score: int) -> None:
    assert deal_score(bid_tricks, tricks) == score


@pytest.mark.parametrize(("tricks", "score"), [(3, 8), (2, -1), (1, -2), (0, -3)])
def test_worked_example_bid_three_played_out(tricks: int, score: int) -> None:
    state = new_game(4)
    skip_deals(state, 5)  # the sixth deal has 3 cards each
    facts = play_rigged_deal(state, seat=0, bid_tricks=3, tricks=tricks)
    assert state.bids[0] == 3
    assert seat_score(facts, 0) == score


def test_worked_example_bid_zero_made() -> None:
    state = new_game(4)
    skip_deals(state, 5)
    assert seat_score(play_rigged_deal(state, seat=0, bid_tricks=0, tricks=0), 0) == 5


def test_worked_example_streak_skips_one_card_deals() -> None:
    """4 players: exact in the four 1-card deals too, which must not count toward the streak;
    then bids 0, 1, 1, 2, 0 made in the deals of 2..6 cards: 5 + 6 + 6 + 7 + 5 + 10 = 39."""
    state = new_game(4, first_dealer=0)
    for _ in range(4):
        facts = play_rigged_deal(state, seat=0, bid_tricks=0, tricks=0)
        assert seat_score(facts, 0) == 5 and not of_kind(facts, StreakBonus)
    assert state.observation(0)["exact_streaks"][0] == 0
    scores, runs = [], []
    for bid_tricks in (0, 1, 1, 2, 0):
        facts = play_rigged_deal(state, seat=0, bid_tricks=bid_tricks, tricks=bid_tricks)
        scores.append(seat_score(facts, 0))
        runs.append(state.observation(None)["exact_streaks"][0])
        bonuses = of_kind(facts, StreakBonus)
        assert bonuses == ([StreakBonus(0, 10)] if len(scores) == 5 else [])
    assert scores == [5, 6, 6, 7, 15]
    assert sum(scores) == 39
    assert runs == [1, 2, 3, 4, 0]  # the counter restarts after the bonus


# -- streaks ------------------------------------------------------------------------------
def test_miss_streak_costs_ten_and_one_card_deals_do_not_count() -> None:
    state = new_game(4, first_dealer=0)
    for _ in range(4):  # four misses in 1-card deals: not counted
        facts = play_rigged_deal(state, seat=0, bid_tricks=0, tricks=1)
        assert seat_score(facts, 0) == -1
    scores = [
        seat_score(play_rigged_deal(state, seat=0, bid_tricks=0, tricks=1), 0) for _ in range(4)
    ]
    facts = play_rigged_deal(state, seat=0, bid_tricks=0, tricks=1)
    assert of_kind(facts, StreakBonus) == [StreakBonus(0, -10)]
    assert [*scores, seat_score(facts, 0)] == [-1, -1, -1, -1, -11]
    assert state.observation(1)["miss_streaks"][0] == 0
    facts = play_rigged_deal(state, seat=0, bid_tricks=4, tricks=4)  # 7 cards: exact
    assert seat_score(facts, 0) == 9
    observed = state.observation(0)
    assert (observed["exact_streaks"][0], observed["miss_streaks"][0]) == (1, 0)


@pytest.mark.parametrize(
    ("pattern", "exact_runs", "miss_runs"),
    [
        ("EEEEME", [1, 2, 3, 4, 0, 1], [0, 0, 0, 0, 1, 0]),
        ("MMMMEM", [0, 0, 0, 0, 1, 0], [1, 2, 3, 4, 0, 1]),
    ],
)
def test_exact_bid_resets_misses_and_miss_resets_exact(
    pattern: str, exact_runs: list[int], miss_runs: list[int]
) -> None:
    state = new_game(4, first_dealer=0)
    skip_deals(state, 4)
    seen_exact, seen_miss = [], []
    for step, outcome in enumerate(pattern):
        seven_cards = step == 5  # deal 10: seat 0 needs 4 tricks for the rig to fit
        tricks = 4 if seven_cards else int(outcome == "M")
        bid_tricks = (5 if outcome == "M" else 4) if seven_cards else 0
        facts = play_rigged_deal(state, seat=0, bid_tricks=bid_tricks, tricks=tricks)
        assert not of_kind(facts, StreakBonus)
        observed = state.observation(0)
        seen_exact.append(observed["exact_streaks"][0])
        seen_miss.append(observed["miss_streaks"][0])
    assert (seen_exact, seen_miss) == (exact_runs, miss_runs)


def test_last_one_card_deals_neither_extend_nor_break_a_streak() -> None:
    state = new_game(4, first_dealer=0)
    skip_deals(state, 14)  # up to and including the four deals of 8
    play_rigged_deal(state, seat=0, bid_tricks=5, tricks=4)  # 7 cards: miss
    play_rigged_deal(state, seat=0, bid_tricks=0, tricks=1)  # 6 cards: miss
    for _ in range(4):  # 5, 4, 3, 2 cards: exact
        play_rigged_deal(state, seat=0, bid_tricks=0, tricks=0)
    assert state.observation(0)["exact_streaks"][0] == 4
    for deal_index in range(4):  # the last four deals, of 1 card: misses
        facts = play_rigged_deal(state, seat=0, bid_tricks=0, tricks=1)
        assert not of_kind(facts, StreakBonus)
        observed = state.observation(0)
        assert (observed["exact_streaks"][0], observed["miss_streaks"][0]) == (4, 0)
        assert bool(of_kind(facts, GameEnded)) == (deal_index == 3)
    assert state.is_over() and state.deal_number == 24


def test_streak_step_restarts_after_a_bonus() -> None:
    exact_run = miss_run = 0
    bonuses = []
    for _ in range(10):
        exact_run, miss_run, bonus = streak_step(exact_run, miss_run, True)
        bonuses.append(bonus)
    assert bonuses == [0, 0, 0, 0, 10, 0, 0, 0, 0, 10]
    assert streak_step(3, 0, False) == (0, 1, 0)
    assert streak_step(0, 4, False) == (0, 0, -10)


# -- dealing, trump, the dealer's bid ------------------------------------------------------
def test_deal_follows_the_documented_order_and_turns_up_trump() -> None:
    state = new_game(4, first_dealer=3)
    order = list(state.deck())
    facts = state.deal(order)
    assert facts[0] == DealStarted(1, 3, 1)
    assert of_kind(facts, CardsDealt) == [
        CardsDealt(seat, (order[seat],), (seat,)) for seat in range(4)
    ]
    assert of_kind(facts, CardTurnedUp) == [CardTurnedUp(parse_card("JC"))]
    assert of_kind(facts, TrumpChosen) == [TrumpChosen("C")]
    assert format_cards(state.deck()[:8]) == "7C 8C 9C 10C JC QC KC AC"


@pytest.mark.parametrize(
    ("players", "ranks"),
    [
        (3, "A K Q J 10 9"),
        (4, "A K Q J 10 9 8 7"),
        (5, "A K Q J 10 9 8 7 6 5"),
        (6, "A K Q J 10 9 8 7 6 5 4 3"),
    ],
)
def test_deck_is_the_eight_n_highest_cards(players: int, ranks: str) -> None:
    state = new_game(players)
    expected = {parse_card(rank + suit) for rank in ranks.split() for suit in "CDHS"}
    assert len(expected) == 8 * players
    assert len(state.deck()) == 8 * players
    assert set(state.deck()) == expected


def test_low_trump_beats_the_ace_of_the_suit_led() -> None:
    state = new_game(4, first_dealer=3)
    state.deal(deck_order(state, ["AH", "7S", "KH", "AD"], turned="8S"))
    bid_round(state, {})
    facts = state.apply(0, play(parse_card("AH")))
    facts += state.apply(1, play(parse_card("7S")))
    facts += state.apply(2, play(parse_card("KH")))
    facts += state.apply(3, play(parse_card("AD")))
    (won,) = of_kind(facts, TrickWon)
    assert (won.leader, won.seat) == (0, 1)
    assert fact_to_dict(won)["cards"] == ["AH", "7S", "KH", "AD"]


@pytest.mark.parametrize("must_trump", [False, True])
def test_deals_of_eight_have_no_trump(must_trump: bool) -> None:
    state = new_game(3, first_dealer=0, must_trump=must_trump)
    skip_deals(state, 9)
    assert next_deal(state) == (0, 8)
    hands = ["AC KC QC JC 10C 9C QS JS", "AH KH QH JH 10H 9H AS KS", "AD KD QD JD 10D 9D 10S 9S"]
    facts = state.deal(deck_order(state, hands))
    assert of_kind(facts, CardTurnedUp) == []
    assert of_kind(facts, TrumpChosen) == [TrumpChosen("")]
    assert state.observation(1)["trump"] == "" and state.observation(1)["turned_up"] is None
    bid_round(state, {})
    state.apply(1, play(parse_card("9H")))
    # void in hearts: any card, spades included, and must_trump has no trump to force
    assert state.legal_actions(2) == [play(card) for card in sorted(parse_cards(hands[2]))]
    state.apply(2, play(parse_card("9S")))
    facts = state.apply(0, play(parse_card("9C")))
    assert of_kind(facts, TrickWon)[0].seat == 1  # the 9S is no trump


def test_dealer_may_not_make_the_bids_total_the_cards() -> None:
    state = new_game(4, first_dealer=0)
    skip_deals(state, 4)
    state.deal(state.deck())
    assert (state.dealer, state.cards_each) == (0, 2)
    bid_round_facts = [state.apply(seat, bid(0)) for seat in (1, 2, 3)]
    assert bid_round_facts[0] == [BidMade(1, 0)]
    reason = "the dealer may not bid 2: the bids would total the number of cards"
    assert state.why_illegal(0, bid(2)) == reason
    assert state.legal_actions(0) == [bid(0), bid(1)]
    with pytest.raises(IllegalAction, match=reason):
        state.apply(0, bid(2))
    state.apply(0, bid(1))
    assert state.phase == "play" and state.to_act() == (1,)


def test_dealer_is_free_when_the_others_overbid() -> None:
    state = new_game(4, first_dealer=0)
    skip_deals(state, 4)
    state.deal(state.deck())
    for seat in (1, 2, 3):
        state.apply(seat, bid(1))
    assert state.legal_actions(0) == [bid(0), bid(1), bid(2)]


def test_one_card_deal_dealer_restriction_and_bid_range() -> None:
    state = new_game(3, first_dealer=2)
    state.deal(state.deck())
    assert state.why_illegal(0, bid(2)) == "bid from 0 to 1: there are 1 tricks in this deal"
    state.apply(0, bid(1))
    state.apply(1, bid(0))
    assert state.legal_actions(2) == [bid(1)]
    assert state.why_illegal(2, bid(0)) == (
        "the dealer may not bid 0: the bids would total the number of cards"
    )


# -- following suit and the must-trump option ----------------------------------------------
@pytest.mark.parametrize("must_trump", [False, True])
def test_must_trump_option(must_trump: bool) -> None:
    state = new_game(4, first_dealer=0, must_trump=must_trump)
    skip_deals(state, 4)
    assert next_deal(state) == (0, 2)
    state.deal(deck_order(state, ["7C 8C", "AH 7H", "7S 7D", "8D 9D"], turned="8S"))
    bid_round(state, {})
    state.apply(1, play(parse_card("AH")))
    # seat 2: void in hearts, holds a trump and a diamond
    seven_diamonds = play(parse_card("7D"))
    if must_trump:
        assert state.legal_actions(2) == [play(parse_card("7S"))]
        reason = "you have no hearts, so you must play a trump (spades)"
        assert state.why_illegal(2, seven_diamonds) == reason
        with pytest.raises(IllegalAction, match=re.escape(reason)):
            state.apply(2, seven_diamonds)
        state.apply(2, play(parse_card("7S")))
    else:
        assert state.legal_actions(2) == [seven_diamonds, play(parse_card("7S"))]
        state.apply(2, seven_diamonds)
    # seat 3: void in hearts and in trumps: any card either way
    assert state.legal_actions(3) == [play(parse_card("8D")), play(parse_card("9D"))]
    state.apply(3, play(parse_card("9D")))
    # seat 0: void in hearts, no trump: any card
    facts = state.apply(0, play(parse_card("8C")))
    assert of_kind(facts, TrickWon)[0].seat == (2 if must_trump else 1)


def test_must_trump_is_off_by_default() -> None:
    state = WHIST.new_game(4, None, first_dealer=0)
    assert isinstance(state, WhistState)
    skip_deals(state, 4)
    state.deal(deck_order(state, ["7C 8C", "AH 7H", "7S 7D", "8D 9D"], turned="8S"))
    bid_round(state, {})
    state.apply(1, play(parse_card("AH")))
    # seat 2: void in hearts, holds the 7S (trump) and may still discard the 7D
    seven_diamonds = play(parse_card("7D"))
    assert state.legal_actions(2) == [seven_diamonds, play(parse_card("7S"))]
    assert state.why_illegal(2, seven_diamonds) is None
    state.apply(2, seven_diamonds)
    assert state.trick == parse_cards("AH 7D")


@pytest.mark.parametrize("must_trump", [False, True])
def test_must_follow_suit_before_trumping(must_trump: bool) -> None:
    state = new_game(4, first_dealer=0, must_trump=must_trump)
    skip_deals(state, 4)
    state.deal(deck_order(state, ["7C 8C", "AH 7D", "7S 7H", "8D 9D"], turned="8S"))
    bid_round(state, {})
    state.apply(1, play(parse_card("AH")))
    assert state.legal_actions(2) == [play(parse_card("7H"))]
    assert state.why_illegal(2, play(parse_card("7S"))) == "you must follow hearts"


# -- the course of a game ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("players", "sizes"),
    [
        (3, [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1]),
        (6, [1] * 6 + [2, 3, 4, 5, 6, 7] + [8] * 6 + [7, 6, 5, 4, 3, 2] + [1] * 6),
    ],
)
def test_deal_sequence_and_dealer_rotation(players: int, sizes: list[int]) -> None:
    first_dealer = 2
    state = new_game(players, first_dealer=first_dealer)
    assert len(state.deck()) == 8 * players
    started: list[DealStarted] = []
    turned_up = []
    ended = []
    while not state.is_over():
        assert state.progress() == len(started) / (3 * players + 12)
        facts = state.deal(state.deck())
        started += of_kind(facts, DealStarted)
        turned_up.append(bool(of_kind(facts, CardTurnedUp)))
        bid_round(state, {})
        ended += of_kind(play_deal(state), GameEnded)
    assert len(sizes) == 3 * players + 12
    assert [fact.cards_each for fact in started] == sizes
    assert [fact.deal_number for fact in started] == list(range(1, len(sizes) + 1))
    assert [fact.dealer for fact in started] == [
        (first_dealer + index) % players for index in range(len(sizes))
    ]
    assert turned_up == [size < 8 for size in sizes]
    assert state.progress() == 1.0
    assert ended == [GameEnded(tuple(state.totals), places_from_totals(state.totals))]


def test_places_share_ties() -> None:
    """Set up the last deal from a snapshot with equal totals; two seats tie for first."""
    state = new_game(3, first_dealer=0)
    skip_deals(state, 20)
    state.deal(state.deck())
    snapshot = state.to_snapshot()
    column = [row[0] for row in snapshot["deal_scores"]]
    snapshot["deal_scores"] = [[score] * 3 for score in column]
    snapshot["totals"] = [sum(column)] * 3
    snapshot["state"].update(hands=[["AS"], ["KS"], ["QS"]], turned_up="9H")
    state = WhistState.from_snapshot(snapshot)
    assert state.places() is None
    bid_round(state, {0: 0, 1: 0})
    assert state.bids == [0, 0, 0]
    facts = play_deal(state)
    (scored,) = of_kind(facts, DealScored)
    assert scored.scores == (-1, 5, 5)
    assert state.places() == (3, 1, 1) == places_from_totals(state.totals)
    assert of_kind(facts, GameEnded) == [GameEnded(tuple(state.totals), (3, 1, 1))]


def test_observation_shows_own_hand_bids_and_trump() -> None:
    state = new_game(4, first_dealer=3)
    state.deal(deck_order(state, ["AH", "7S", "KH", "AD"], turned="8S"))
    state.apply(0, bid(1))
    mine = state.observation(0)
    assert mine["hand"] == ["AH"] and mine["hand_sizes"] == [1, 1, 1, 1]
    assert (mine["trump"], mine["turned_up"], mine["cards_each"]) == ("S", "8S", 1)
    assert mine["bids"] == [1, None, None, None] and mine["legal_actions"] == []
    assert state.observation(1)["legal_actions"] == ["bid 0", "bid 1"]
    assert state.observation(None)["hand"] == []
    assert mine["deals_total"] == 24


def test_only_whist_ends_when_every_other_person_has_left() -> None:
    assert WHIST.ends_when_one_person_remains
    assert [name for name, spec in GAMES.items() if spec.ends_when_one_person_remains] == ["whist"]


# -- bad input ----------------------------------------------------------------------------
def test_unknown_cards_and_actions_are_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        parse_cards("AS ZZ")
    with pytest.raises(InvalidInput):
        parse_action("play 11H")
    with pytest.raises(InvalidInput):
        parse_action("bid many")


def test_wrong_player_counts_and_options() -> None:
    for players in (2, 7):
        with pytest.raises(InvalidInput, match="3 to 6 players"):
            new_game(players)
    with pytest.raises(InvalidInput, match="unknown option"):
        new_game(4, trumps="yes")
    with pytest.raises(InvalidInput, match="must_trump"):
        new_game(4, must_trump="maybe")
    assert new_game(4, must_trump="on").must_trump is True


def test_bad_deck_orders() -> None:
    state = new_game(4)
    deck = list(state.deck())
    with pytest.raises(InvalidInput):
        state.deal(deck[:-1])
    with pytest.raises(InvalidInput):
        state.deal([parse_card("2C"), *deck[1:]])  # 2C is not in the 4-player deck
    with pytest.raises(InvalidInput):
        state.deal([deck[0], *deck[:-1]])


def test_out_of_turn_and_wrong_phase() -> None:
    state = new_game(4, first_dealer=3)
    assert state.why_illegal(0, bid(0)) == "the cards have not been dealt yet"
    with pytest.raises(IllegalAction, match="not been dealt"):
        state.apply(0, bid(0))
    state.deal(deck_order(state, ["AH", "7S", "KH", "AD"], turned="8S"))
    with pytest.raises(IllegalAction, match="already dealt"):
        state.deal(state.deck())
    with pytest.raises(IllegalAction, match="not your turn: waiting for seat 0"):
        state.apply(1, bid(0))
    assert state.legal_actions(1) == []
    assert state.why_illegal(0, play(parse_card("AH"))) == "it is time to bid"
    assert state.why_illegal(0, PASS_BID) == "it is time to bid"
    assert state.why_illegal(9, bid(0)) == "there is no seat 9 at this table"
    bid_round(state, {})
    assert state.why_illegal(0, bid(0)) == "it is time to play a card"
    assert state.why_illegal(0, play(parse_card("KH"))) == "you do not hold KH"
    assert state.why_illegal(0, play(parse_card("2C"))) == "you do not hold 2C"
    for seat, card in enumerate(["AH", "7S", "KH", "AD"]):
        state.apply(seat, play(parse_card(card)))
    assert state.needs_deal() and state.to_act() == ()


def test_game_over_refuses_everything() -> None:
    state = new_game(3)
    skip_deals(state, 21)
    assert state.is_over() and state.phase == "over"
    assert state.why_illegal(0, bid(0)) == "the game is over"
    with pytest.raises(IllegalAction, match="the game is over"):
        state.deal(state.deck())


def mid_trick_snapshot() -> dict[str, Any]:
    """4 players, deal 5 (2 cards each), dealer 0; seat 1 has led the AH."""
    state = new_game(4, first_dealer=0)
    skip_deals(state, 4)
    state.deal(deck_order(state, ["7C 8C", "AH 7H", "7S 8H", "8D 9D"], turned="8S"))
    bid_round(state, {1: 1, 2: 1, 3: 1})
    state.apply(1, play(parse_card("AH")))
    return state.to_snapshot()


def bidding_snapshot() -> dict[str, Any]:
    state = new_game(4, first_dealer=0)
    skip_deals(state, 4)
    state.deal(state.deck())
    state.apply(1, bid(1))
    return state.to_snapshot()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(snapshot: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = snapshot
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _delete(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda snapshot: snapshot["state"].pop(key)


def _deal_six(snapshot: dict[str, Any]) -> None:
    snapshot.update(deal_number=6, dealer=1)  # deal 6 is dealt by seat 1, but 4 deals are scored


def _bad_score(snapshot: dict[str, Any]) -> None:
    snapshot["deal_scores"][0][0] = 3  # neither 5 + bid nor a loss
    snapshot["totals"] = [sum(row[seat] for row in snapshot["deal_scores"]) for seat in range(4)]


TAMPERINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "unknown card": _set("state.hands.0.0", "ZZ"),
    "card not in this deck": _set("state.hands.0.0", "2C"),
    "card twice": _set("state.hands.0.0", "8D"),
    "turned card in a hand": _set("state.turned_up", "7C"),
    "no turned card in a deal of 2": _set("state.turned_up", None),
    "turned card not a string": _set("state.turned_up", 5),
    "bid above the cards": _set("state.bids.0", 3),
    "bid not a number": _set("state.bids.0", "1"),
    "missing bid in play": _set("state.bids.0", None),
    "dealer makes the total": _set("state.bids", [0, 1, 1, 0]),  # 2 bids for 2 cards
    "lost card": _set("state.hands.0", ["7C"]),
    "trick too long": _set("state.trick", ["AH", "7S", "8H", "8D"]),
    "unknown phase": _set("state.phase", "pass"),
    "phase says over": _set("state.phase", "over"),
    "over flag": _set("over", True),
    "wrong dealer": _set("dealer", 2),
    "deal number past the end": _set("deal_number", 25),
    "deal number without scores": _deal_six,
    "impossible score": _bad_score,
    "totals not the sum": _set("totals.0", 999),
    "too many hands": _set("state.hands", [[], [], [], [], []]),
    "missing field": _delete("trick"),
    "wrong game": _set("game", "hearts"),
    "too many players": _set("players", 7),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_snapshot_is_invalid_input(name: str) -> None:
    snapshot = mid_trick_snapshot()
    WhistState.from_snapshot(copy.deepcopy(snapshot))  # the untouched one loads
    TAMPERINGS[name](snapshot)
    with pytest.raises(InvalidInput):
        WhistState.from_snapshot(snapshot)


@pytest.mark.parametrize(
    "change",
    [
        _set("state.bids", [None, None, 1, None]),  # seat 2 bid before seat 1
        _set("state.bids", [1, 1, 1, 1]),  # everyone bid but still bidding
        _set("state.trick", ["AS"]),  # a card played during the bidding
    ],
)
def test_tampered_bidding_snapshot_is_invalid_input(change: Callable[..., None]) -> None:
    snapshot = bidding_snapshot()
    assert WhistState.from_snapshot(copy.deepcopy(snapshot)).to_act() == (2,)
    change(snapshot)
    with pytest.raises(InvalidInput):
        WhistState.from_snapshot(snapshot)


def test_between_deals_snapshot_checks_the_last_score() -> None:
    state = new_game(4)
    skip_deals(state, 6)
    snapshot = state.to_snapshot()
    assert WhistState.from_snapshot(copy.deepcopy(snapshot)).to_snapshot() == snapshot
    snapshot["state"]["bids"] = [
        bid_value + 1 if seat == 0 else bid_value
        for seat, bid_value in enumerate(snapshot["state"]["bids"])
    ]
    with pytest.raises(InvalidInput):
        WhistState.from_snapshot(snapshot)


# -- the property harness -----------------------------------------------------------------
CARD_TOKEN = re.compile(r"(?<![0-9A-Z])(?:10|[2-9JQKA])[CDHS](?![0-9A-Z])")


def check_observations(state: WhistState) -> None:
    """No observation holds a card that its seat has not been dealt, seen played or turned."""
    public = {card for _, cards, _ in state.tricks for card in cards} | set(state.trick)
    if state.turned_up is not None:
        public.add(state.turned_up)
    for seat in [None, *range(state.num_players)]:
        observed = state.observation(seat)
        known = public | (set(state.hands[seat]) if seat is not None else set())
        shown = {parse_card(token) for token in CARD_TOKEN.findall(json.dumps(observed))}
        assert shown <= known, (seat, shown - known)
        if seat is not None:
            assert observed["hand"] == [format_card(card) for card in state.hands[seat]]


def check_legal_actions(state: WhistState, rng: random.Random) -> None:
    seat = state.to_act()[0]
    candidates = [PLAY[card] for card in state.hands[seat]] + list(BIDS[:10])
    if rng.random() < 0.05:
        candidates = [PLAY[card] for card in range(52)] + list(BIDS) + [PASS_BID]
    legal = state.legal_actions(seat)
    assert legal, "a seat to act always has a legal action"
    assert {a for a in candidates if state.why_illegal(seat, a) is None} == set(legal)
    other = (seat + 1) % state.num_players
    assert state.legal_actions(other) == []
    assert state.why_illegal(other, legal[0]) is not None


def step(state: WhistState, rng: random.Random) -> list[Fact]:
    if state.needs_deal():
        order = list(state.deck())
        rng.shuffle(order)
        return state.deal(order)
    seat = state.to_act()[0]
    return state.apply(seat, rng.choice(state.legal_actions(seat)))


def check_restored_continues(state: WhistState, rng: random.Random) -> None:
    snapshot = state.to_snapshot()
    restored = WhistState.from_snapshot(json.loads(json.dumps(snapshot)))
    assert restored.to_snapshot() == snapshot
    seed = rng.random()
    twin_rng, restored_rng = random.Random(seed), random.Random(seed)
    twin = state.clone()
    assert twin.to_snapshot() == snapshot
    for _ in range(25):
        if twin.is_over():
            break
        assert step(twin, twin_rng) == step(restored, restored_rng)
        assert twin.observation(0) == restored.observation(0)
    assert state.to_snapshot() == snapshot, "the clone shares nothing with the original"


class DealLedger:
    """What one deal's facts must add up to (the score invariants)."""

    def __init__(self, state: WhistState, facts: list[Fact]) -> None:
        self.cards_each = state.cards_each
        dealt = [card for fact in of_kind(facts, CardsDealt) for card in fact.cards]
        turned = [fact.card for fact in of_kind(facts, CardTurnedUp)]
        assert all(fact.audience == (fact.seat,) for fact in of_kind(facts, CardsDealt))
        assert len(dealt) == state.num_players * self.cards_each
        assert len(set(dealt + turned)) == len(dealt) + len(turned)
        assert set(dealt + turned) <= set(state.deck())
        assert len(turned) == (self.cards_each < 8)
        if self.cards_each == 8:
            assert sorted(dealt) == sorted(state.deck())
        self.dealt = set(dealt)
        self.played: list[Card] = []
        self.bids: dict[int, int] = {}
        self.won = [0] * state.num_players
        self.bonus = [0] * state.num_players

    def record(self, state: WhistState, facts: list[Fact]) -> None:
        players = state.num_players
        for fact in facts:
            assert fact.audience is None or isinstance(fact, CardsDealt)
            if isinstance(fact, BidMade):
                self.bids[fact.seat] = fact.tricks
            elif isinstance(fact, CardPlayed):
                self.played.append(fact.card)
            elif isinstance(fact, TrickWon):
                assert len(fact.cards) == players
                assert list(fact.cards) == self.played[-players:]
                self.won[fact.seat] += 1
            elif isinstance(fact, StreakBonus):
                assert self.cards_each > 1 and abs(fact.points) == 10
                self.bonus[fact.seat] += fact.points
            elif isinstance(fact, DealScored):
                self.check_scores(state, fact)

    def check_scores(self, state: WhistState, scored: DealScored) -> None:
        assert sorted(self.played) == sorted(self.dealt)
        assert sum(self.won) == self.cards_each
        assert sum(self.bids.values()) != self.cards_each
        expected = tuple(
            deal_score(self.bids[seat], self.won[seat]) + self.bonus[seat]
            for seat in range(state.num_players)
        )
        assert scored.scores == expected
        assert scored.totals == tuple(
            sum(row[seat] for row in state.deal_scores) for seat in range(state.num_players)
        )


def random_game(players: int, seed: int) -> None:
    rng = random.Random(seed)
    state = new_game(players, first_dealer=rng.randrange(players), must_trump=rng.random() < 0.5)
    ledger: DealLedger | None = None
    progress = 0.0
    while not state.is_over():
        if not state.needs_deal():
            check_legal_actions(state, rng)
        if rng.random() < 0.02:
            check_observations(state)
        if rng.random() < 0.01:
            check_restored_continues(state, rng)
        was_dealing = state.needs_deal()
        facts = step(state, rng)
        if was_dealing:
            ledger = DealLedger(state, facts)
        else:
            assert ledger is not None
            ledger.record(state, facts)
        assert state.progress() >= progress
        progress = state.progress()
        assert progress == len(state.deal_scores) / (3 * players + 12)
    check_observations(state)
    assert state.deal_number == len(state.deal_scores) == 3 * players + 12
    assert progress == 1.0
    assert state.places() == places_from_totals(state.totals)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_random_games(players: int) -> None:
    for game in range(75):
        random_game(players, seed=players * 1000 + game)


def test_the_deals_left_that_count_toward_streaks_leave_out_the_one_card_deals() -> None:
    state = new_game(4)
    assert state.counted_deals_left() == 16  # 24 deals, 8 of them of one card
    skip_deals(state, 4)  # the four opening deals of one card
    assert state.counted_deals_left() == 16
    skip_deals(state, 1)  # the first deal of two
    assert state.counted_deals_left() == 15
