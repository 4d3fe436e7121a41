"""Hearts scenarios (docs/rules.md, Hearts) written with card strings."""

from __future__ import annotations

import random

import pytest

from cardtable.engine.actions import pass_cards, play
from cardtable.engine.cards import FULL_DECK, RANK_TEXTS, format_card, parse_card, parse_cards
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.facts import DealScored, Fact
from cardtable.engine.games.hearts.rules import HEARTS, CardsPassed, HeartsState, MoonShot

SUITS = "CDHS"


def deck_dealing(hands: list[str], dealer: int) -> list[int]:
    """The deck order that deals ``hands[seat]`` to each seat (one at a time from the left)."""
    cards = [parse_cards(hand) for hand in hands]
    first = (dealer + 1) % 4
    return [cards[(first + index) % 4][index // 4] for index in range(52)]


def suit_hand(suit: str) -> str:
    return " ".join(f"{rank}{suit}" for rank in RANK_TEXTS)


def new_state(*, quick: bool = False, first_dealer: int = 3) -> HeartsState:
    state = HEARTS.new_game(4, {"quick": quick}, first_dealer)
    assert isinstance(state, HeartsState)
    return state


def play_cards(state: HeartsState, cards: str) -> list[Fact]:
    facts: list[Fact] = []
    for text in cards.split():
        seat = state.to_act()[0]
        facts += state.apply(seat, play(parse_card(text)))
    return facts


def test_passing_cycle_left_right_across_none() -> None:
    state = new_state()
    directions = []
    rng = random.Random(5)
    for _ in range(5):
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        state.deal(deck)
        directions.append(state.observation(0)["pass_direction"])
        _finish_deal_randomly(state, rng)
        if state.is_over():
            break
    assert directions[:5] == ["left", "right", "across", "none", "left"][: len(directions)]


def _finish_deal_randomly(state: HeartsState, rng: random.Random) -> None:
    deal = state.deal_number
    while not state.is_over() and not (state.needs_deal() and state.deal_number == deal):
        seat = state.to_act()[0]
        choice = state.card_set_choice(seat)
        if choice is not None:
            state.apply(seat, choice.make(rng.sample(choice.cards, choice.count)))
        else:
            state.apply(seat, rng.choice(state.legal_actions(seat)))


def test_passed_cards_arrive_left_and_are_hidden_until_all_chose() -> None:
    state = new_state(first_dealer=3)
    state.deal(deck_dealing([suit_hand("C"), suit_hand("D"), suit_hand("H"), suit_hand("S")], 3))
    facts = state.apply(0, pass_cards(parse_cards("AC KC QC")))
    assert facts[0].audience == (0,)
    assert state.observation(1)["received"] == []
    for seat, cards in ((1, "AD KD QD"), (2, "AH KH QH"), (3, "AS KS QS")):
        facts = state.apply(seat, pass_cards(parse_cards(cards)))
    passed = [fact for fact in facts if type(fact).__name__ == "CardsPassed"]
    assert [(fact.seat, fact.to_seat) for fact in passed] == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert all(fact.audience == (fact.seat, fact.to_seat) for fact in passed)
    assert state.observation(1)["received"] == ["QC", "KC", "AC"]
    assert "AC" in state.observation(1)["hand"]
    assert state.phase == "play"


#: Seat 0 holds the clubs, seat 1 the diamonds, seat 2 the hearts, seat 3 the spades.
SUIT_HANDS = [suit_hand(suit) for suit in SUITS]


def dealt_as_deal(deal: int) -> HeartsState:
    """A classic game whose deal number ``deal`` (2 or later) gives ``SUIT_HANDS``, seat 0 dealing.

    The deals before it are skipped by setting the deal number, as ``no_pass_deal`` does.
    """
    state = new_state(first_dealer=3)
    state.deal_number = deal - 1
    state.deal(deck_dealing(SUIT_HANDS, dealer=0))
    assert state.deal_number == deal and state.dealer == 0
    return state


@pytest.mark.parametrize(
    ("deal", "direction", "receivers"),
    [
        (2, "right", [3, 0, 1, 2]),
        (3, "across", [2, 3, 0, 1]),
        (5, "left", [1, 2, 3, 0]),
        (6, "right", [3, 0, 1, 2]),
        (7, "across", [2, 3, 0, 1]),
    ],
)
def test_passed_cards_go_to_the_seat_the_cycle_names(
    deal: int, direction: str, receivers: list[int]
) -> None:
    state = dealt_as_deal(deal)
    assert state.observation(0)["pass_direction"] == direction
    facts: list[Fact] = []
    for seat, suit in enumerate(SUITS):
        facts += state.apply(seat, pass_cards(parse_cards(f"A{suit} K{suit} Q{suit}")))
    passed = [fact for fact in facts if isinstance(fact, CardsPassed)]
    assert [(fact.seat, fact.to_seat) for fact in passed] == list(enumerate(receivers))
    for seat, suit in enumerate(SUITS):
        received = state.observation(receivers[seat])
        assert received["received"] == [f"Q{suit}", f"K{suit}", f"A{suit}"]
        assert f"A{suit}" in received["hand"]
        assert f"A{suit}" not in state.observation(seat)["hand"]
    assert state.phase == "play"


@pytest.mark.parametrize("deal", [4, 8])
def test_no_pass_on_every_fourth_deal(deal: int) -> None:
    state = dealt_as_deal(deal)
    assert state.observation(0)["pass_direction"] == "none"
    assert state.phase == "play" and state.to_act() == (0,)
    assert state.legal_actions(0) == [play(parse_card("2C"))]
    assert state.why_illegal(0, pass_cards(parse_cards("AC KC QC"))) == "it is time to play a card"
    assert state.hands == [sorted(parse_cards(hand)) for hand in SUIT_HANDS]


def no_pass_deal(hands: list[str]) -> HeartsState:
    """A quick game whose current deal is the fourth of the cycle (no pass), dealt by seat 0."""
    state = new_state(quick=True, first_dealer=3)
    state.deal_number = 3  # the next deal is the 4th: no pass
    state.deal(deck_dealing(hands, dealer=0))
    assert state.dealer == 0
    assert state.phase == "play"
    return state


SPLIT_HANDS = [
    "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC 2H",
    "3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH AC",
    "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD",
    "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS",
]


def test_two_of_clubs_leads_and_first_trick_limits() -> None:
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC",
        "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH QS",
        "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S 10S JS KS AS AH",
    ]
    state = no_pass_deal(hands)
    assert state.to_act() == (0,)
    assert state.legal_actions(0) == [play(parse_card("2C"))]
    assert state.why_illegal(0, play(parse_card("3C"))) == (
        "the first trick must be led with the two of clubs"
    )
    play_cards(state, "2C")
    # seat 1 has no club and nothing but hearts and the QS: so it may play them
    assert state.why_illegal(1, play(parse_card("QS"))) is None
    play_cards(state, "QS 2D")
    # seat 3 has spades, so no heart on the first trick
    assert state.why_illegal(3, play(parse_card("AH"))) == (
        "no heart and no queen of spades on the first trick"
    )
    assert play(parse_card("AH")) not in state.legal_actions(3)
    play_cards(state, "2S")
    assert state.to_act() == (0,)  # only one club: 2C wins
    assert state.points == [13, 0, 0, 0]
    assert not state.hearts_broken  # the QS does not break hearts


def test_hearts_may_be_led_when_only_hearts_are_left() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S")  # seat 1 wins with the AC and holds only hearts
    assert state.to_act() == (1,)
    assert not state.hearts_broken
    assert state.why_illegal(1, play(parse_card("3H"))) is None
    play_cards(state, "3H")
    assert state.hearts_broken


def test_hearts_may_not_be_led_before_broken() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S 3H 3D 3S 2H")  # seat 1's 3H wins; hearts now broken
    assert state.hearts_broken
    assert state.to_act() == (1,)
    fresh = no_pass_deal(
        [
            "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC 2H 3H",
            "4H 5H 6H 7H 8H 9H 10H JH QH KH AH AC KC",
            "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD",
            "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS",
        ]
    )
    play_cards(fresh, "2C AC 2D 2S")
    assert fresh.why_illegal(1, play(parse_card("4H"))) == (
        "you may not lead hearts until hearts are broken"
    )
    assert all(action.card == parse_card("KC") for action in fresh.legal_actions(1))


def test_must_follow_suit_and_turn_order() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S 3H 3D 3S")
    with pytest.raises(IllegalAction, match="you must follow hearts"):
        state.apply(0, play(parse_card("3C")))
    with pytest.raises(IllegalAction, match="not your turn"):
        state.apply(1, play(parse_card("4H")))


def _score_deal(taken: dict[int, str]) -> tuple[int, ...]:
    """Scores of one deal where each seat took the given cards (rest to nobody special)."""
    state = new_state(quick=True)
    state._phase = "play"  # scoring is tested through the trick points directly
    for seat, cards in taken.items():
        for card in parse_cards(cards):
            state.points[seat] += 13 if format_card(card) == "QS" else int(card // 13 == 2)
    facts = state._score_deal()
    return next(fact.scores for fact in facts if type(fact).__name__ == "DealScored")


def test_worked_example_scores() -> None:
    taken = {0: "QS 2H 3H 4H", 1: "5H 6H 7H 8H 9H", 2: "10H JH QH KH AH", 3: ""}
    assert _score_deal(taken) == (16, 5, 5, 0)


def test_worked_example_moon() -> None:
    taken = {0: "QS " + suit_hand("H"), 1: "", 2: "", 3: ""}
    assert _score_deal(taken) == (0, 26, 26, 26)


def test_moon_played_out() -> None:
    hands = [
        "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",  # seat 0: every heart
        "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC",
        "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS",
    ]
    state = no_pass_deal(hands)
    # seat 0 holds every heart; the others throw their highest cards when they lead,
    # so whatever seat 0 plays, it ends up with all hearts only if it wins them: play it out
    rng = random.Random(1)
    _finish_deal_randomly(state, rng)
    assert state.is_over()
    assert sum(state.totals) in (26, 78)
    if sum(state.totals) == 78:
        assert sorted(state.totals) == [0, 26, 26, 26]


# Seat 3 wins the first trick (no points) and leads the QS into seat 0's AS; seat 0 then wins
# every trick with the AC and its ten hearts, and the others' 2H, 3H and 4H fall into them.
MOON_HANDS = [
    "4C AC AS AH KH QH JH 10H 9H 8H 7H 6H 5H",
    "2C 5C 6C 7C 8C 2S 3S 4S 5S 2D 3D 4D 5D",
    "3C 9C 10C JC QC 6S 7S 8S 9S 6D 7D 8D 9D",
    "KC QS 10S JS KS 10D JD QD KD AD 2H 3H 4H",
]
MOON_TRICKS = " ".join(
    [
        *("2C 3C KC 4C", "QS AS 2S 6S", "AC 5C 9C 2H", "AH 6C 10C 3H", "KH 7C JC 4H"),
        *("QH 8C QC 10S", "JH 3S 7S JS", "10H 4S 8S KS", "9H 5S 9S 10D", "8H 2D 6D JD"),
        *("7H 3D 7D QD", "6H 4D 8D KD", "5H 5D 9D AD"),
    ]
)


def test_moon_shot_in_a_played_out_deal() -> None:
    state = no_pass_deal(MOON_HANDS)
    assert state.to_act() == (1,)
    facts = play_cards(state, MOON_TRICKS)
    assert [winner for _, _, winner in state.tricks] == [3] + [0] * 12
    assert MoonShot(0) in facts
    assert [fact.scores for fact in facts if isinstance(fact, DealScored)] == [(0, 26, 26, 26)]
    assert state.is_over() and state.places() == (1, 2, 2, 2)


def classic_moon_deal(previous: list[list[int]]) -> HeartsState:
    """A classic game resumed after three deals scored ``previous``, dealt ``MOON_HANDS``."""
    snapshot = new_state(first_dealer=3).to_snapshot()
    totals = [sum(column) for column in zip(*previous, strict=True)]
    snapshot.update(deal_number=3, deal_scores=previous, totals=totals)
    snapshot["state"]["pass_offset"] = 2  # the third deal passed across
    state = HeartsState.from_snapshot(snapshot)
    state.deal(deck_dealing(MOON_HANDS, dealer=0))
    assert state.phase == "play" and state.dealer == 0
    return state


def test_classic_game_ends_after_a_deal_reaching_exactly_100() -> None:
    state = classic_moon_deal([[0, 26, 0, 0], [0, 26, 0, 0], [0, 22, 4, 0]])
    play_cards(state, MOON_TRICKS)
    assert state.totals == [0, 100, 30, 26]
    assert state.is_over() and state.places() == (1, 4, 3, 2)


def test_classic_game_goes_on_at_99() -> None:
    state = classic_moon_deal([[0, 26, 0, 0], [0, 26, 0, 0], [0, 21, 5, 0]])
    play_cards(state, MOON_TRICKS)
    assert state.totals == [0, 99, 31, 26]
    assert not state.is_over() and state.needs_deal() and state.places() is None


def test_classic_game_ends_after_deal_reaching_100_lowest_wins() -> None:
    state = new_state()
    rng = random.Random(11)
    deals = 0
    while not state.is_over():
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        state.deal(deck)
        _finish_deal_randomly(state, rng)
        deals += 1
        if not state.is_over():
            assert max(state.totals) < 100
    assert max(state.totals) >= 100
    assert deals == state.deal_number > 1
    places = state.places()
    assert places is not None
    best = min(state.totals)
    assert all(places[seat] == 1 for seat in range(4) if state.totals[seat] == best)


def test_quick_game_is_one_deal() -> None:
    state = new_state(quick=True)
    deck = list(FULL_DECK)
    random.Random(2).shuffle(deck)
    state.deal(deck)
    _finish_deal_randomly(state, random.Random(2))
    assert state.is_over()
    assert state.deal_number == 1
    assert state.progress() == 1.0


def test_bad_input() -> None:
    state = new_state()
    with pytest.raises(IllegalAction, match="not been dealt"):
        state.apply(0, play(parse_card("2C")))
    with pytest.raises(InvalidInput):
        state.deal(list(FULL_DECK)[:51])
    with pytest.raises(InvalidInput):
        parse_card("1X")
    state.deal(list(FULL_DECK))
    with pytest.raises(IllegalAction, match="pass three cards"):
        state.apply(0, play(parse_card("2C")))
    hand = state.hands[0]
    with pytest.raises(IllegalAction, match="exactly three"):
        state.apply(0, pass_cards(hand[:2]))
    foreign = state.hands[1][0]
    with pytest.raises(IllegalAction, match="you do not hold"):
        state.apply(0, pass_cards([*hand[:2], foreign]))
    with pytest.raises(InvalidInput, match="unknown option"):
        HEARTS.new_game(4, {"fast": "yes"}, 0)
    with pytest.raises(InvalidInput, match="4 players"):
        HEARTS.new_game(3, {}, 0)


def test_tampered_snapshot_is_rejected() -> None:
    state = new_state()
    state.deal(list(FULL_DECK))
    snapshot = state.to_snapshot()
    snapshot["state"]["hands"][0][0] = snapshot["state"]["hands"][1][0]
    with pytest.raises(InvalidInput, match="inconsistent"):
        HeartsState.from_snapshot(snapshot)
    snapshot = state.to_snapshot()
    snapshot["totals"] = [5, 0, 0, 0]
    with pytest.raises(InvalidInput):
        HeartsState.from_snapshot(snapshot)
    with pytest.raises(InvalidInput):
        HeartsState.from_snapshot({"format": "nope"})
