"""The rule-based player in scripted positions: what a sensible player does."""

from __future__ import annotations

import random

import pytest

from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import keen_action, rules_action
from cardtable.bots.rules.belote import TAKE_AT, hand_value
from cardtable.bots.rules.hearts import card_then as hearts_card_then
from cardtable.bots.rules.three_five_eight import FITNESS_SCALE, measure_fitness_scale
from cardtable.bots.rules.whist import CALIBRATION, expected_tricks, measure_calibration
from cardtable.bots.search import PLAYOUT_POLICIES
from cardtable.engine.actions import format_action, parse_action
from cardtable.engine.cards import FULL_DECK, SPADES, format_card, parse_card, parse_cards
from cardtable.engine.games.hearts.rules import HEARTS, PLAY_PHASE, HeartsState
from cardtable.engine.registry import game_spec
from tests.bots.positions import random_positions
from tests.engine.test_three_five_eight import deck_order, new_state, resume_after_deal_one


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
    assert hearts_card_then(state, 0, hand, hand, [], [], fish_for_queen=True) == parse_card("9S")
    assert hearts_card_then(state, 0, hand, hand, [], []) == parse_card("4D")
    # Holding a spade above the jack, or once the queen has fallen, it leads low as before.
    guarded = parse_cards("6C 9S KS 4D")
    assert hearts_card_then(state, 0, guarded, guarded, [], [], fish_for_queen=True) == parse_card(
        "4D"
    )
    queen_fell = [(1, tuple(parse_cards("2S QS 3S 4S")), 2)]
    fished = hearts_card_then(state, 0, hand, hand, [], queen_fell, fish_for_queen=True)
    assert fished == parse_card("4D")


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
        keen = hearts_card_then(state, seat, hand, legal, trick, tricks, fish_for_queen=True)
        assert rules_action(state, seat) == parse_action(f"play {format_card(then)}")
        assert keen_action(state, seat) == parse_action(f"play {format_card(keen)}")
        compared += 1
    assert compared > 100


@pytest.mark.parametrize(("game", "players"), [("whist", 4), ("358", 3), ("belote", 4)])
def test_keen_play_is_the_rule_based_play_outside_hearts(game: str, players: int) -> None:
    for state in random_positions(game, players, {}, seed=3, count=40):
        seat = state.to_act()[0]
        assert keen_action(state, seat) == rules_action(state, seat)


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
