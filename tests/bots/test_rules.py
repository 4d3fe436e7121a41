"""The rule-based player in scripted positions: what a sensible player does."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.rules import keen_action, rules_action, set_alternatives
from cardtable.bots.rules.belote import CARD_VALUE, TAKE_AT, hand_value
from cardtable.bots.rules.hearts import card_then as hearts_card_then
from cardtable.bots.rules.hearts import pass_alternatives
from cardtable.bots.rules.three_five_eight import (
    CARD_FITNESS,
    FITNESS_SCALE,
    contract_fitness,
    measure_fitness_scale,
)
from cardtable.bots.rules.whist import (
    CALIBRATION,
    act_pushing,
    expected_tricks,
    measure_calibration,
)
from cardtable.bots.search import PLAYOUT_POLICIES
from cardtable.engine.actions import PLAY_CARD, format_action, parse_action
from cardtable.engine.cards import (
    FULL_DECK,
    SPADES,
    SUIT_OF,
    format_card,
    parse_card,
    parse_cards,
)
from cardtable.engine.games.belote.rules import POINTS, STRENGTH, BeloteState
from cardtable.engine.games.hearts.rules import HEARTS, PLAY_PHASE, HeartsState
from cardtable.engine.games.whist.rules import WhistState, deal_sizes
from cardtable.engine.registry import game_spec
from tests.bots.positions import random_positions
from tests.engine.test_belote import dealt, play_tricks, take_at
from tests.engine.test_three_five_eight import deck_order, new_state, resume_after_deal_one
from tests.engine.test_whist import bid_round as whist_bid_round
from tests.engine.test_whist import deck_order as whist_deck_order
from tests.engine.test_whist import new_game as whist_game
from tests.engine.test_whist import next_deal, skip_deals


def hearts_deal(hands: dict[int, str], first_dealer: int = 3) -> HeartsState:
    """A quick Hearts game dealt so that the seats named hold the given cards (the rest of
    the deck fills the other seats); seat 0 is left of dealer 3 and gets the first card."""
    given = {seat: parse_cards(text) for seat, text in hands.items()}
    rest = iter(sorted(set(FULL_DECK) - {card for cards in given.values() for card in cards}))
    full = {seat: given.get(seat, []) for seat in range(4)}
    for seat in range(4):
        full[seat] = full[seat] + [next(rest) for _ in range(13 - len(full[seat]))]
    first = (first_dealer + 1) % 4
    order = [full[(first + index) % 4][index // 4] for index in range(52)]
    state = HEARTS.new_game(4, {"quick": True}, first_dealer)
    assert isinstance(state, HeartsState)
    state.deal(order)
    return state


def test_hearts_passes_the_queen_and_high_hearts() -> None:
    state = hearts_deal({0: "QS 3S 4S 2C 3C 4C 5C 6C 2D 3D 4D AH KH"})
    action = rules_action(state, 0)
    assert set(action.cards) == set(parse_cards("QS AH KH"))


def test_hearts_keeps_a_well_guarded_queen() -> None:
    state = hearts_deal({0: "QS 2S 3S 4S 5S 2C 3C 4C 5C 6C 2D 3D 4D"})
    assert parse_card("QS") not in rules_action(state, 0).cards


def hearts_play(hands: dict[int, str]) -> HeartsState:
    """A Hearts deal in its play phase (the fourth deal: no pass) with these hands; cards not
    named fill the seats given short, lowest first."""
    given = {seat: parse_cards(text) for seat, text in hands.items()}
    rest = iter(sorted(set(FULL_DECK) - {card for cards in given.values() for card in cards}))
    full = [given.get(seat, []) for seat in range(4)]
    full = [cards + [next(rest) for _ in range(13 - len(cards))] for cards in full]
    leader = next(seat for seat in range(4) if parse_card("2C") in full[seat])
    snapshot = HEARTS.new_game(4, {}, 0).to_snapshot()
    rows = [[26, 0, 0, 0], [0, 26, 0, 0], [0, 0, 26, 0]]
    snapshot.update(deal_number=4, dealer=3, deal_scores=rows, totals=[26, 26, 26, 0])
    snapshot["state"] = {
        "phase": "play",
        "hands": [[format_card(card) for card in cards] for cards in full],
        "pass_offset": 0,
        "passes": [None] * 4,
        "received": [[]] * 4,
        "trick": [],
        "leader": leader,
        "player": leader,
        "tricks": [],
        "hearts_broken": False,
        "points": [0] * 4,
    }
    return HeartsState.from_snapshot(snapshot)


def play(state: HeartsState, cards: str) -> None:
    for card in parse_cards(cards):
        state.apply(state.to_act()[0], parse_action(f"play {format_card(card)}"))


# Seat 0 leads 2C; seat 3 wins the first trick with AC and leads again.
SPADE_HANDS = {
    0: "2C 9C QC 5C 2D 3D 4D 5D 6D 7D 8D 9D 10D",
    1: "3C JD",
    2: "4C QS 2H 3H",
    3: "AC 10C JC KC 6C 7C 8C 2S 3S",
}


def test_hearts_ducks_under_the_trick() -> None:
    state = hearts_play(SPADE_HANDS)
    play(state, "2C 3C 4C AC 10C")
    assert format_action(rules_action(state, 0)) == "play 9C"


def test_hearts_dumps_the_queen_when_void() -> None:
    state = hearts_play(SPADE_HANDS)
    play(state, "2C 3C 4C AC KC 5C")
    assert state.to_act() == (1,)
    play(state, "JD")  # seat 1 has no club left
    assert format_action(rules_action(state, 2)) == "play QS"


def test_belote_takes_on_the_jack_and_nine_of_trump() -> None:
    strong = parse_cards("JH 9H AH AS 7D")
    weak = parse_cards("7H 8C 9D QS KD")
    hearts = parse_card("JH") // 13
    assert hand_value(strong, hearts) >= TAKE_AT > hand_value(weak, hearts)
    # The per-card table the bid readings use adds up to the same value.
    assert sum(CARD_VALUE[hearts][card] for card in strong) == hand_value(strong, hearts)


def test_358_declarer_chooses_the_suit_it_holds() -> None:
    hands = {1: "AS KS QS JS 10S 9S 2C 3C 4C 5C 6C 7C 8C 2D 3D 4D"}
    state = new_state(first_dealer=0)
    state.deal(deck_order(0, hands))
    assert format_action(rules_action(state, 1)) == "contract S"
    resumed = resume_after_deal_one((0, 0, 0), first_dealer=2)
    resumed.deal(deck_order(0, hands))
    resumed.used[1] = ["S"]
    assert format_action(rules_action(resumed, 1)) != "contract S"


def test_fitness_scale_matches_a_new_measurement() -> None:
    measured = measure_fitness_scale(3000, random.Random(8))
    for kind, (mean, spread) in FITNESS_SCALE.items():
        assert measured[kind][0] == pytest.approx(mean, abs=0.15)
        assert measured[kind][1] == pytest.approx(spread, abs=0.15)


def test_whist_estimates_and_calibration() -> None:
    assert expected_tricks(parse_cards("AS KS"), SPADES, 4) == pytest.approx(2.0)
    low, high = parse_cards("7C"), parse_cards("AC")
    assert expected_tricks(low, SPADES, 4) < expected_tricks(high, SPADES, 4)
    fits = measure_calibration(4, random.Random(2))
    assert set(fits) == set(CALIBRATION)


def test_keen_hearts_fishes_for_the_queen_with_its_lowest_spade() -> None:
    state = hearts_play(SPADE_HANDS)
    hand = parse_cards("6C 9S 10S 4D")
    assert hearts_card_then(state, 0, hand, hand, [], [], keen=True) == parse_card("9S")
    assert hearts_card_then(state, 0, hand, hand, [], []) == parse_card("4D")
    # Holding a spade above the jack, or once the queen has fallen, it leads low as before.
    guarded = parse_cards("6C 9S KS 4D")
    assert hearts_card_then(state, 0, guarded, guarded, [], [], keen=True) == parse_card("4D")
    queen_fell = [(1, tuple(parse_cards("2S QS 3S 4S")), 2)]
    fished = hearts_card_then(state, 0, hand, hand, [], queen_fell, keen=True)
    assert fished == parse_card("4D")


def test_keen_hearts_leads_a_low_heart_once_hearts_are_broken() -> None:
    state = hearts_play(SPADE_HANDS)
    hand = parse_cards("3H 7D KS QS")
    assert hearts_card_then(state, 0, hand, hand, [], [], keen=True) == parse_card("3H")
    assert hearts_card_then(state, 0, hand, hand, [], []) == parse_card("7D")


def test_keen_hearts_leads_low_from_a_short_suit() -> None:
    state = hearts_play(SPADE_HANDS)
    hand = parse_cards("4C 5C 6C 8C 7D KS QS")
    # Two ranks a card held: the lone seven of diamonds (5 + 2) before the four of clubs (2 + 8).
    assert hearts_card_then(state, 0, hand, hand, [], [], keen=True) == parse_card("7D")
    assert hearts_card_then(state, 0, hand, hand, [], []) == parse_card("4C")


def test_keen_hearts_plays_under_the_queen_when_she_may_fall_on_its_spade() -> None:
    state = hearts_play(SPADE_HANDS)
    hand = parse_cards("10S AS 4D")
    led = parse_cards("5S")
    # The queen is in another hand and two seats are still to play: not the ace she falls on.
    assert hearts_card_then(state, 0, hand, parse_cards("10S AS"), led, [], keen=True) == (
        parse_card("10S")
    )
    assert hearts_card_then(state, 0, hand, parse_cards("10S AS"), led, []) == parse_card("AS")
    # Holding her, or once she has fallen, it takes the trick high as before.
    holding = parse_cards("10S AS QS")
    assert hearts_card_then(state, 0, holding, parse_cards("10S AS QS"), led, [], keen=True) == (
        parse_card("AS")
    )
    queen_fell = [(1, tuple(parse_cards("2S QS 3S 4S")), 2)]
    assert hearts_card_then(
        state, 0, hand, parse_cards("10S AS"), led, queen_fell, keen=True
    ) == parse_card("AS")


def test_keen_hearts_takes_a_trick_without_points_with_its_highest_card_when_last() -> None:
    state = hearts_play(SPADE_HANDS)
    hand = parse_cards("3D KD 9C")
    trick = parse_cards("5D 8D 2D")
    assert hearts_card_then(state, 0, hand, parse_cards("3D KD"), trick, [], keen=True) == (
        parse_card("KD")
    )
    assert hearts_card_then(state, 0, hand, parse_cards("3D KD"), trick, []) == parse_card("3D")
    # A trick with points is still ducked.
    hearted = parse_cards("5D 8D 2H")
    assert hearts_card_then(state, 0, hand, parse_cards("3D KD"), hearted, [], keen=True) == (
        parse_card("3D")
    )


def test_hearts_live_play_agrees_with_its_reading_of_the_tricks() -> None:
    """On a whole state the rule-based player finds its legal cards and whether the queen of
    spades is still out the quick way (the hands); reading a past play, from the deal's
    tricks. Both must choose the same card, or worlds would be weighed by another player."""
    compared = 0
    for state in random_positions("hearts", 4, {}, seed=5, count=200):
        assert isinstance(state, HeartsState)
        seat = state.to_act()[0]
        assert state.playable((seat + 1) % 4) == []
        if state.phase != PLAY_PHASE:
            assert state.playable(seat) == []
            continue
        legal = [action.card for action in state.legal_actions(seat)]
        assert state.playable(seat) == legal
        if len(legal) == 1:
            continue
        hand, trick, tricks = state.hands[seat], state.trick, state.tricks
        then = hearts_card_then(state, seat, hand, legal, trick, tricks)
        keen = hearts_card_then(state, seat, hand, legal, trick, tricks, keen=True)
        assert rules_action(state, seat) == parse_action(f"play {format_card(then)}")
        assert keen_action(state, seat) == parse_action(f"play {format_card(keen)}")
        compared += 1
    assert compared > 100


def whist_trick_one(hands: list[str], turned: str, bids: dict[int, int]) -> WhistState:
    """A 4-seat Whist deal of ``len(hands[0])`` cards each (seat 0 dealing, so seat 1 bids and
    leads first), bid with ``bids`` (others bid their first legal bid), before its first card."""
    cards_each = len(parse_cards(hands[0]))
    state = whist_game(4, first_dealer=-deal_sizes(4).index(cards_each) % 4)
    while next_deal(state)[1] != cards_each:
        skip_deals(state, 1)
    assert next_deal(state)[0] == 0
    state.deal(whist_deck_order(state, hands, turned))
    whist_bid_round(state, bids)
    return state


def test_keen_whist_keeps_its_master_trump_for_the_trick_it_still_needs() -> None:
    # Seat 2 bid one and holds the ace of trump: taking this heart trick would make two.
    hands = ["7C 8C 9C", "QH 7D 8D", "AS AH 9H", "10C JC QC"]
    state = whist_trick_one(hands, turned="7S", bids={2: 1})
    state.apply(1, parse_action("play QH"))
    assert rules_action(state, 2) == parse_action("play AH")
    assert keen_action(state, 2) == parse_action("play 9H")


def test_keen_whist_leads_the_card_likeliest_to_lose() -> None:
    # Seat 1 bid nothing: its low club has only three clubs above it out, its nine of diamonds five.
    hands = ["7C QD KD AD 7S", "8C 9C 10C JC 9D", "QC KC AC 8D 8S", "10D JD 9S 10S JS"]
    state = whist_trick_one(hands, turned="7H", bids={1: 0})
    assert state.to_act() == (1,)
    assert rules_action(state, 1) == parse_action("play 8C")
    assert keen_action(state, 1) == parse_action("play 9D")


def test_whist_push_playout_leaves_a_trick_to_a_seat_that_has_its_bid() -> None:
    # Seat 1 bid nothing and leads the queen of hearts; seat 2 needs a trick and could take
    # this one with its ace, but in the playout it leaves it to seat 1, which then goes over.
    hands = ["7C 8C 9C", "QH 7D 8D", "AH 9H 10C", "10D JD QD"]
    state = whist_trick_one(hands, turned="7S", bids={1: 0, 2: 1})
    state.apply(1, parse_action("play QH"))
    assert keen_action(state, 2) == parse_action("play AH")
    assert act_pushing(state, 2) == parse_action("play 9H")


def test_whist_push_playout_leads_to_force_a_trick_on_a_seat_that_has_its_bid() -> None:
    # Seat 3 bid nothing and holds the two top clubs; no other seat can beat or trump the
    # queen of clubs, so seat 1, wanting no trick either, leads it and seat 3 must take it.
    hands = ["9D 10H JH", "QC 7D 8H", "8C JD QD", "KC AC 10D"]
    state = whist_trick_one(hands, turned="7S", bids={1: 0, 2: 1, 0: 1})
    assert keen_action(state, 1) == parse_action("play 7D")
    assert act_pushing(state, 1) == parse_action("play QC")
    # With a spade, seat 0 could trump the clubs: no lead forces seat 3.
    hands = ["9D 10H 8S", "QC 7D 8H", "8C JD QD", "KC AC 10D"]
    state = whist_trick_one(hands, turned="7S", bids={1: 0, 2: 1, 0: 1})
    assert act_pushing(state, 1) == keen_action(state, 1)


def test_whist_push_playout_forces_only_when_its_masters_cover_what_it_needs() -> None:
    # Seat 1 still needs a trick and holds no master: it plays for its own bid.
    hands = ["9D 10H JH", "QC 7D 8H", "8C JD QD", "KC AC 10D"]
    state = whist_trick_one(hands, turned="7S", bids={1: 1, 3: 0})
    assert act_pushing(state, 1) == keen_action(state, 1)


def test_keen_358_plays_the_plain_rules() -> None:
    for state in random_positions("358", 3, {}, seed=3, count=40):
        seat = state.to_act()[0]
        assert keen_action(state, seat) == rules_action(state, seat)


def three_five_eight_discard(hand: str, talon: str, contract: str) -> Any:
    """A first 3-5-8 deal where seat 1 declares ``contract`` with ``hand`` and ``talon``: seat
    1 to put four of its twenty cards away."""
    state = new_state(first_dealer=0)
    state.deal(deck_order(0, {1: hand}, talon=talon))
    state.apply(1, parse_action(f"contract {contract}"))
    assert state.phase == "discard"
    return state


def test_358_discard_alternatives_empty_short_suits() -> None:
    hand = "AS KS QS JS 10S 9S 8S KH 3D 9D 4C 6C 8C 10C QC AC"
    state = three_five_eight_discard(hand, "2H 3H 4H 5H", "S")
    rule = rules_action(state, 1)
    alternatives = set_alternatives(state, 1)
    assert rule not in alternatives and len(set(alternatives)) == len(alternatives)
    discards = [set(action.cards) for action in alternatives]
    hand_now = set(state.hands[1])
    assert all(len(cards) == 4 and cards <= hand_now for cards in discards)
    assert not any(SUIT_OF[card] == SPADES for cards in discards for card in cards)
    # The rule keeps the nine of diamonds; emptying diamonds tops up with its next hearts.
    assert set(rule.cards) == set(parse_cards("3D 2H 3H 4H"))
    assert set(parse_cards("3D 9D 2H 3H")) in discards
    for action in alternatives:
        assert state.why_illegal(1, action) is None


def test_358_discard_alternatives_offer_the_four_lowest_plain_cards() -> None:
    """The rule puts away a singleton eight before the fourth low club; the four lowest plain
    cards keep it."""
    hand = "AS KS QS JS 10S 9S 8S 8D 2C 3C 4C 5C 6C 7C AH KH"
    state = three_five_eight_discard(hand, "9H 10H JH QH", "S")
    assert set(rules_action(state, 1).cards) == set(parse_cards("8D 2C 3C 4C"))
    discards = [set(action.cards) for action in set_alternatives(state, 1)]
    assert discards == [set(parse_cards("2C 3C 4C 5C"))]


def test_358_discard_alternatives_in_minimum_tricks_empty_a_suit_with_the_highest_cards() -> None:
    hand = "2S 3S 4S 5S 6S 7S 8S 9S KH 3D 7D 4C 6C 8C 10C QC"
    state = three_five_eight_discard(hand, "2H 3H 4H 5H", "MT")
    assert set(rules_action(state, 1).cards) == set(parse_cards("KH QC 10C 9S"))
    discards = [set(action.cards) for action in set_alternatives(state, 1)]
    assert set(parse_cards("3D 7D KH QC")) in discards
    assert set(parse_cards("2H 3H 4H 5H")) not in discards


@pytest.mark.parametrize(
    ("game", "players"), [("whist", 3), ("whist", 6), ("358", 3), ("belote", 4), ("hearts", 4)]
)
def test_every_playout_policy_plays_only_legal_actions(game: str, players: int) -> None:
    """Playouts apply their policy's actions unchecked (``GameState.apply_trusted``): every
    policy must choose among the legal actions, in every phase; the checked apply here raises
    on any other."""
    for name, policy in PLAYOUT_POLICIES.items():
        rng = random.Random(name)
        state = game_spec(game).new_game(players, None, 0)
        while not state.is_over():
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            state.apply(seat, policy(state, seat, rng))
        assert state.places() is not None


def test_the_keen_rules_strategy_plays_the_keen_player_from_its_observation() -> None:
    """``rules:keen=true`` (how the tournament weighs the keen habits on their own) sees only
    its seat's observation, yet plays what the keen player plays on the whole state."""
    strategy = strategy_by_name("rules", keen=True)
    differs = 0
    for state in random_positions("hearts", 4, {}, seed=9, count=120):
        seat = state.to_act()[0]
        chosen = strategy.choose(state.observation(seat), random.Random(seat))
        assert parse_action(chosen) == keen_action(state, seat)
        differs += keen_action(state, seat) != rules_action(state, seat)
    assert differs > 5


# Seat 0 takes hearts (the turned king) holding no other trump; it leads the ace of spades
# and wins the first trick.
CASHING_HANDS = (
    "KH QS AS 10S 8C 7C 8D 7D",
    "8H 7H KS 8S AC 10C AD 10D",
    "AH 10H QH 9S KC QC KD QD",
    "JH 9H JS 7S JC 9C JD 9D",
)


def belote_after_the_ace_of_spades(hands: tuple[str, ...] = CASHING_HANDS) -> BeloteState:
    state = dealt(0, hands, "KH", taker=0)
    take_at(state, 0)
    play_tricks(state, ["AS 7S 9S 8S"])
    return state


def test_keen_belote_taker_draws_trumps_before_cashing_its_masters() -> None:
    """With a second trump, the same taker leads its lowest trump first, not its master ten of
    spades: the others' trumps come out, so that ten is not ruffed later."""
    hands = (
        CASHING_HANDS[0].replace("QS", "QH"),
        CASHING_HANDS[1],
        CASHING_HANDS[2].replace("QH", "QS"),
        CASHING_HANDS[3],
    )
    state = belote_after_the_ace_of_spades(hands)
    assert format_action(keen_action(state, 0)) == "play QH"
    assert format_action(rules_action(state, 0)) != "play QH"


def test_keen_belote_the_takers_partner_does_not_draw_trumps() -> None:
    # Seat 2 takes; seat 0, the dealer, leads holding two trumps (not the master) and an ace.
    hands = (
        "QH 8H AS 10S 8C 7C 8D 7D",
        "7H KS 8S AC 10C AD 10D QS",
        "KH AH 10H 9S KC QC KD QD",
        "JH 9H JS 7S JC 9C JD 9D",
    )
    state = dealt(0, hands, "KH", taker=2)
    take_at(state, 2)
    assert state.to_act() == (0,)
    assert format_action(keen_action(state, 0)) == "play AS"


def test_keen_belote_cashes_a_ten_once_its_ace_has_fallen() -> None:
    state = belote_after_the_ace_of_spades()
    assert state.to_act() == (0,)
    assert format_action(keen_action(state, 0)) == "play 10S"
    assert format_action(rules_action(state, 0)) != "play 10S"


def test_keen_belote_second_hand_keeps_a_card_that_may_still_be_beaten() -> None:
    state = belote_after_the_ace_of_spades()
    play_tricks(state, ["8C 9C"])
    # Seat 2's king and queen of clubs both beat the nine, but the ace and ten are out.
    assert format_action(rules_action(state, 2)) == "play KC"
    assert format_action(keen_action(state, 2)) == "play QC"


# Seat 0 took the turned jack of hearts; seat 2, void in hearts, plays third to a trump lead.
PARTNER_LEADS_TRUMP_HANDS = (
    "JH 9H AS 10S 8C 7C 8D 7D",
    "AH 10H KH QH QS JS 10D JD",
    "AD 10C 9S 7S 9C 9D KD QD",
    "8H 7H KS 8S AC KC QC JC",
)


@pytest.mark.parametrize("keen", [False, True])
@pytest.mark.parametrize(("lead", "expected"), [("JH", "play AD"), ("9H", "play 7S")])
def test_belote_gives_points_to_a_partner_only_when_nothing_unseen_beats_its_card(
    lead: str, expected: str, keen: bool
) -> None:
    """The partner's jack of trump is master: the ace of diamonds goes on it. Its nine of trump
    could still lose to the jack (the seat cannot see whose it is): the seat throws its cheapest
    card instead."""
    state = dealt(0, PARTNER_LEADS_TRUMP_HANDS, "JH", taker=0)
    take_at(state, 0)
    play_tricks(state, [f"{lead} 7H"])
    assert state.to_act() == (2,)
    act = keen_action if keen else rules_action
    assert format_action(act(state, 2)) == expected


def test_keen_belote_does_not_overtake_a_partner_who_is_winning() -> None:
    """Whenever the partner is winning a trick it may still lose, with a seat still to play,
    the keen player plays its cheapest card, where the plain one may overtake."""
    trusted = overtaken = 0
    for state in random_positions("belote", 4, {}, seed=4, count=600):
        if not isinstance(state, BeloteState) or state.phase != "play" or not state.trick:
            continue
        seat = state.to_act()[0]
        partner_winning = state.winner == (seat + 2) % 4
        if not partner_winning or len(state.trick) == 3:
            continue
        keen, plain = keen_action(state, seat).card, rules_action(state, seat).card
        legal = [action.card for action in state.legal_actions(seat)]
        points, strength = POINTS[state.trump], STRENGTH[state.trump]
        cheapest = min(legal, key=lambda card: (points[card], strength[card]))
        if keen != cheapest:
            # A partner who holds the trick for sure is given points, as the plain player does.
            assert keen == plain
            continue
        trusted += 1
        overtaken += plain != cheapest
    assert trusted > 10 and overtaken > 3


def test_hearts_pass_alternatives_keep_the_high_cards_or_empty_a_short_suit() -> None:
    state = hearts_deal({0: "QS 3S 4S 2C 3C 4C 5C 6C 2D 3D AH KH 7H"})
    alternatives = [set(action.cards) for action in pass_alternatives(state, 0)]
    rule = set(rules_action(state, 0).cards)
    assert rule == set(parse_cards("QS AH KH"))
    # First the three least dangerous cards, then each suit of three cards or fewer, a short
    # one topped up with the most dangerous other card (clubs, five cards, stay).
    assert alternatives == [
        set(parse_cards("2C 3C 3S")),
        set(parse_cards("2D 3D QS")),
        set(parse_cards("3S 4S QS")),
        set(parse_cards("7H KH AH")),
    ]
    assert len(alternatives) == len({frozenset(cards) for cards in alternatives})
    legal = HeartsState.card_set_choice(state, 0)
    assert legal is not None
    for cards in alternatives:
        assert len(cards) == 3 and cards <= set(legal.cards)


def test_only_hearts_passes_have_alternatives() -> None:
    state = hearts_deal({0: "QS 3S 4S 2C 3C 4C 5C 6C 2D 3D AH KH 7H"})
    assert set_alternatives(state, 0) == pass_alternatives(state, 0) != []
    assert set_alternatives(whist_game(4), 0) == []
    playing = hearts_play({0: "QS 3S 4S 2C 3C 4C 5C 6C 2D 3D AH KH 7H"})
    assert set_alternatives(playing, playing.to_act()[0]) == []  # past the pass


@pytest.mark.parametrize(("game", "players"), [("whist", 4), ("358", 3), ("belote", 4)])
def test_playable_is_the_legal_cards_of_the_seat_to_play(game: str, players: int) -> None:
    """The rule-based player reads its cards through ``playable`` (no actions built), so it
    must give exactly the cards of the legal plays, and nothing to a seat not to act."""
    plays = 0
    for state in random_positions(game, players, {}, seed=3, count=150):
        acting = state.to_act()
        if not acting:
            continue
        seat = acting[0]
        assert state.playable((seat + 1) % players) == []
        legal = state.legal_actions(seat)
        expected = [action.card for action in legal if action.kind == PLAY_CARD]
        assert state.playable(seat) == expected
        plays += bool(expected)
    assert plays > 50


def test_card_fitness_sums_to_a_hands_contract_fitness() -> None:
    """Reading a declarer's contract adds one card's fitness at a time, so the table must add
    up to the fitness the rule-based declarer chose by."""
    rng = random.Random(4)
    for _ in range(200):
        cards = rng.sample(range(52), 6)
        for contract, table in CARD_FITNESS.items():
            assert sum(table[card] for card in cards) == pytest.approx(
                contract_fitness(cards, contract)
            )
