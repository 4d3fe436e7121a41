"""Sampling hidden cards: every deal drawn is one the seat's view allows.

Checked on random positions of every game, for every seat: the real hidden cards always obey
the limits the view implies (so the inference never rules out the truth); drawn deals keep every
hand size, never give a player a suit it showed void in, never move a card the seat has seen,
and rebuild a state whose observation for the seat is exactly the one it was drawn from.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardtable.bots.determinize import sample_placement, sample_world
from cardtable.engine.actions import parse_action
from cardtable.engine.cards import SUIT_OF, Card, parse_card, parse_cards
from cardtable.engine.determinize import (
    HiddenCards,
    WorldBuilder,
    hidden_cards,
    state_from_view,
)
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import GameState
from cardtable.engine.games.belote.rules import BELOTE, DECK
from cardtable.engine.games.hearts.rules import PASS_DIRECTION_NAMES
from tests.bots.positions import TABLES, random_positions, table_id
from tests.engine.test_three_five_eight import EXCHANGE_A, deck_order, resume_after_deal_one


def real_placement(state: GameState, hidden: HiddenCards) -> list[list[Card]]:
    """Where the unseen cards really are, place by place."""
    game = state.spec.name
    played = {card for _, cards, _ in state.tricks for card in cards} | set(state.trick)
    unseen = set(hidden.unseen)
    places: list[list[Card]] = []
    for place in hidden.places:
        if place.startswith("hand "):
            cards = list(state.hands[int(place.split()[1])])
        elif place == "stock" and game == "whist":
            dealt = {card for hand in state.hands for card in hand} | played
            dealt |= {state.turned_up} if state.turned_up is not None else set()
            cards = [card for card in state.deck() if card not in dealt]
        elif place == "stock":
            cards = list(state.stock)
        elif place == "talon":
            cards = list(state.talon) if state.phase in ("contract", "exchange") else []
        else:
            cards = list(state.discarded)
        places.append([card for card in cards if card in unseen])
    return places


def voids_shown(observation: dict[str, Any]) -> dict[int, set[int]]:
    """Suits each seat showed it lacks by not following, read straight from the tricks."""
    voids: dict[int, set[int]] = {}
    direction = -1 if observation["game"] == "belote" else 1
    players = observation["players"]
    tricks = [(trick["leader"], trick["cards"]) for trick in observation["tricks"]]
    if observation["trick"]:
        current = observation["trick"]
        tricks.append((current[0]["seat"], [entry["card"] for entry in current]))
    for leader, cards in tricks:
        led = SUIT_OF[parse_card(cards[0])]
        for position, text in enumerate(cards[1:], start=1):
            if SUIT_OF[parse_card(text)] != led:
                voids.setdefault((leader + direction * position) % players, set()).add(led)
    return voids


def comparable(observation: dict[str, Any]) -> dict[str, Any]:
    """The observation minus what a drawn Hearts world leaves open: others' undisclosed passes
    are chosen again in it, so who has passed already may differ."""
    result = dict(observation)
    if result["game"] == "hearts" and result["phase"] == "pass":
        result.pop("to_act")
        result.pop("passes_chosen")
    return result


def check_world(state: GameState, seat: int, world: GameState) -> None:
    observation = state.observation(seat)
    assert comparable(world.observation(seat)) == comparable(observation)
    played = {card for _, cards, _ in state.tricks for card in cards} | set(state.trick)
    own = set(parse_cards(observation["hand"]))
    assert own <= set(world.hands[seat])
    for other, suits in voids_shown(observation).items():
        assert not [card for card in world.hands[other] if SUIT_OF[card] in suits]
    for other, hand in enumerate(world.hands):
        assert not set(hand) & played
        if other != seat:
            assert not set(hand) & own
    game = state.spec.name
    if game == "whist" and state.turned_up is not None:
        assert all(state.turned_up not in hand for hand in world.hands)
    if game == "hearts" and state.phase == "play" and observation["passed"]:
        offsets = {name: offset for offset, name in PASS_DIRECTION_NAMES.items()}
        receiver = (seat + offsets[observation["pass_direction"]]) % 4
        for card in set(parse_cards(observation["passed"])) - played:
            assert card in world.hands[receiver]
    if game == "belote" and state.phase == "play" and state.turned_card not in played:
        assert state.taker is not None and state.turned_card in world.hands[state.taker]
    if game == "358" and state.phase == "play" and seat == observation["declarer"]:
        assert set(world.discarded) == set(state.discarded)


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_drawn_deals_respect_the_view(table: tuple[str, int, dict[str, Any]]) -> None:
    game, players, options = table
    rng = random.Random(11)
    excluded = 0
    for state in random_positions(game, players, options, seed=3, count=40, chance=0.1):
        for seat in range(players):
            observation = state.observation(seat)
            hidden = hidden_cards(observation)
            for place, cards in enumerate(real_placement(state, hidden)):
                assert len(cards) == hidden.counts[place]
                assert not set(cards) & hidden.excluded[place], "the truth was ruled out"
                assert all(place in hidden.places_for[card] for card in cards)
            excluded += sum(len(cards) for cards in hidden.excluded)
            placement = sample_placement(hidden, rng)
            assert [len(cards) for cards in placement] == list(hidden.counts)
            assert sorted(card for cards in placement for card in cards) == sorted(hidden.unseen)
            for place, cards in enumerate(placement):
                assert not set(cards) & hidden.excluded[place]
            check_world(state, seat, state_from_view(observation, placement))
    assert excluded > 0, "no position showed any limit: the test saw too little play"


@pytest.mark.parametrize("table", TABLES, ids=table_id)
def test_worlds_refilled_from_one_are_the_states_the_loader_builds(
    table: tuple[str, int, dict[str, Any]],
) -> None:
    """A builder loads its first world and copies it for the others, refilling the hidden
    places; each copy must equal, field by field, the state loaded from its own snapshot, in
    every phase, or search would play a world that breaks the rules or the view."""
    game, players, options = table
    rng = random.Random(5)
    refilled = 0
    for state in random_positions(game, players, options, seed=7, count=30, chance=0.1):
        for seat in range(players):
            observation = state.observation(seat)
            builder = WorldBuilder(observation)
            for _ in range(3):
                placement = sample_placement(builder.hidden, rng)
                world = builder.build(placement)
                loaded = WorldBuilder(observation).build(placement)
                assert type(world) is type(loaded) and vars(world) == vars(loaded)
                check_world(state, seat, world)
                refilled += 1
            # the worlds handed out are the caller's: changing one changes no later one
            hand = list(world.hands[seat])
            world.hands[seat].clear()
            assert builder.build(placement).hands[seat] == hand
    assert refilled >= 3 * players * 30


def test_belote_a_trump_under_the_best_shows_no_higher_trump() -> None:
    """Sorted deck, dealer 0; seat 3 takes hearts. Hands: 0 8D 9D 10D 9H 10H QS KS AS,
    1 KC AC 7D 7H 8H 9S 10S JS, 2 10C JC QC KD AD AH 7S 8S, 3 7C 8C 9C JD QD JH QH KH."""
    state = BELOTE.new_game(4, {}, first_dealer=0)
    state.deal(DECK)
    state.apply(3, parse_action("take"))
    # Seat 3 trumps the ace of spades (void in spades), then leads the king of trumps: seat 2
    # must beat it with the ace, and seat 1, playing the 8 under the ace, shows it has neither
    # the jack nor the nine, the only trumps above the ace.
    for seat, card in [(0, "AS"), (3, "QH"), (2, "7S"), (1, "9S"), (3, "KH"), (2, "AH")]:
        state.apply(seat, parse_action(f"play {card}"))
    state.apply(1, parse_action("play 8H"))
    spades = {card for card in DECK if SUIT_OF[card] == SUIT_OF[parse_card("AS")]}
    for observer in (0, 2):
        hidden = hidden_cards(state.observation(observer))
        assert set(parse_cards("JH 9H")) <= hidden.excluded[1]
        assert not set(parse_cards("7H 10H")) & hidden.excluded[1]
        assert spades <= hidden.excluded[3]


def test_an_inconsistent_placement_is_refused() -> None:
    state = next(random_positions("hearts", 4, {"quick": True}, seed=1, count=1, chance=1.0))
    observation = state.observation(0)
    hidden = hidden_cards(observation)
    placement = sample_placement(hidden, random.Random(1))
    placement[1], placement[2] = placement[2], placement[1][:-1]
    with pytest.raises(InvalidInput):
        state_from_view(observation, placement)
    with pytest.raises(InvalidInput):
        hidden_cards(state.observation(None))
    world = sample_world(observation, random.Random(2))
    assert world.observation(0) == observation


def test_358_exchange_shows_where_cards_went_and_what_the_debtor_lacks() -> None:
    """docs/rules.md's exchange example: creditor seat 2 gives 7H, debtor seat 1 returns KH."""
    state = resume_after_deal_one((0, -2, 2))
    hands = {
        2: EXCHANGE_A,
        0: "8S 7S 6S 5S 4S 3S AD KD QD JD 10D 9D 8D 7D 6D 5D",
        1: "2S KH 9H 4D 3D 2D JC QC KC AC 2H 3H 4H 5H 6H 8H",
    }
    state.deal(deck_order(1, hands, talon="10H JH QH AH"))
    state.apply(2, parse_action("contract S"))
    state.apply(2, parse_action("give 7H"))
    creditor_view = hidden_cards(state.observation(2))
    assert parse_card("7H") not in creditor_view.unseen
    assert parse_card("AH") in creditor_view.excluded[1]
    assert parse_card("QH") not in creditor_view.excluded[1]
    rng = random.Random(3)
    for _ in range(20):
        world = sample_world(state.observation(2), rng)
        assert parse_card("7H") in world.hands[1] and parse_card("AH") not in world.hands[1]
    debtor_view = hidden_cards(state.observation(1))
    assert parse_card("KH") not in debtor_view.unseen
    assert parse_card("7H") in hidden_cards(state.observation(0)).unseen


def test_358_a_card_that_comes_back_is_the_seats_own() -> None:
    """The declarer (seat 2) gives 7H and gets KH; then gives 5H and gets the 7H back, and puts
    it away with the talon. It knows where the 7H is: not with the debtor."""
    state = resume_after_deal_one((0, -2, 2))
    hands = {
        2: "AS KS QS JS 10S 9S 7H 5H 2C 3C 4C 5C 6C 7C 8C 9C",
        1: "2S KH 4D 3D 2D JC QC KC AC 5D 6D 7D 8D 9D 10D JD",
        0: "8S 7S 6S 5S 4S 3S AD KD QD",
    }
    state.deal(deck_order(1, hands, talon="JH QH AH 10H"))
    for action in ("contract S", "give 7H", "give 5H"):
        state.apply(2, parse_action(action))
    assert [exchange["returned"] for exchange in state.observation(2)["exchanges"]] == [
        "KH",
        "7H",
    ]
    state.apply(2, parse_action("discard 7H 2C 3C 4C"))
    hidden = hidden_cards(state.observation(2))
    assert parse_card("5H") in hidden.known[1] and parse_card("7H") not in hidden.known[1]
    for seat in range(3):
        world = sample_world(state.observation(seat), random.Random(seat))
        assert world.observation(seat) == state.observation(seat)
