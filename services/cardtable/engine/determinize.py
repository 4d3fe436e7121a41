"""Determinization: a whole state of a game from one seat's observation plus the hidden cards.

A bot that searches (OpenSpiel's "information set Monte Carlo") must simulate the game, and the
only simulator is the engine itself, so that no rule is written twice. This module is the
bridge, in two pure steps; the random choice in between belongs to the caller (the engine never
draws anything):

1. :func:`hidden_cards` reads what the seat does *not* see: the unseen cards, the places they
   may be in (another seat's hand, the stock, 3-5-8's talon or discard pile, even the seat's own
   hand while 3-5-8 shows it only 6 cards), how many each place holds, and which cards each
   place cannot hold because of what the seat saw: a player who did not follow suit has none of
   it, a Belote player who did not overtrump has no higher trump, a 3-5-8 debtor who gave back a
   card held nothing higher in that suit. Cards the seat knows the place of (the cards it passed
   in Hearts, the turned card a Belote taker picked up, a card given in a 3-5-8 exchange) are
   not unseen: they are put in their place directly. A card that may since have moved where
   the seat could not see (a 3-5-8 declarer may have put it away with the talon) stays unseen,
   excluded from every place but those it may be in.
2. :func:`state_from_view` takes one placement of the unseen cards (one list per place) and
   builds the complete state through the game's own snapshot loader, which checks every rule of
   consistency. The result agrees with the observation in everything the seat can see.

>>> from cardtable.engine.registry import game_spec
>>> state = game_spec("hearts").new_game(4, {"quick": "true"}, first_dealer=3)
>>> facts = state.deal(state.deck())
>>> hidden = hidden_cards(state.observation(0))
>>> hidden.places, hidden.counts, len(hidden.unseen)
(('hand 0', 'hand 1', 'hand 2', 'hand 3'), (0, 13, 13, 13), 39)
>>> placement = [[], *(hidden.unseen[13 * i : 13 * i + 13] for i in range(3))]
>>> world = state_from_view(state.observation(0), placement)
>>> world.observation(0) == state.observation(0)
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardtable.engine.cards import (
    FULL_DECK,
    HEARTS,
    SUIT_LETTERS,
    SUIT_OF,
    Card,
    card_texts,
    parse_card,
)
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import SNAPSHOT_VERSION, GameState
from cardtable.engine.games.belote import rules as belote
from cardtable.engine.games.belote.phases import Phase as BelotePhase
from cardtable.engine.games.hearts import rules as hearts
from cardtable.engine.games.hearts.phases import Phase as HeartsPhase
from cardtable.engine.games.three_five_eight import rules as three_five_eight
from cardtable.engine.games.three_five_eight.phases import Phase as ThreeFiveEightPhase
from cardtable.engine.games.whist import rules as whist
from cardtable.engine.registry import game_spec
from cardtable.engine.snapshot import SNAPSHOT_FORMAT

STOCK = "stock"
TALON = "talon"
DISCARDED = "discarded"


def hand_place(seat: int) -> str:
    """The name of a seat's hand among the places; hands come first, in seat order."""
    return f"hand {seat}"


@dataclass(frozen=True)
class HiddenCards:
    """What one seat does not see, and what it knows about where those cards are.

    ``places[i]`` holds ``counts[i]`` of the ``unseen`` cards and none of ``excluded[i]``,
    besides ``known[i]``, the cards the seat knows are there (its own hand, first of all).
    The places are the seats' hands (``hand 0`` ...) followed by the game's other piles.
    """

    seat: int
    places: tuple[str, ...]
    counts: tuple[int, ...]
    unseen: tuple[Card, ...]
    excluded: tuple[frozenset[Card], ...]
    known: tuple[tuple[Card, ...], ...]

    def allows(self, place: int, card: Card) -> bool:
        return self.counts[place] > 0 and card not in self.excluded[place]


@dataclass
class _Play:
    """One card played, with what the rules knew when it was played."""

    seat: int
    card: Card
    trick: tuple[Card, ...]  # the cards of its trick before it, in play order
    trick_number: int  # 0-based within the deal


class _Layout:
    """Places, their sizes, the cards known to be in them, and exclusions: built per game."""

    def __init__(self, seat: int, players: int, extra: Sequence[str]) -> None:
        self.seat = seat
        self.places = [hand_place(other) for other in range(players)] + list(extra)
        self.sizes = [0] * len(self.places)
        self.known: list[list[Card]] = [[] for _ in self.places]
        self.excluded: list[set[Card]] = [set() for _ in self.places]

    def index(self, place: str) -> int:
        return self.places.index(place)

    def exclude(self, place: int, cards: Iterable[Card]) -> None:
        self.excluded[place].update(cards)

    def hidden(self, deck: Sequence[Card], seen: Iterable[Card]) -> HiddenCards:
        placed = {card for cards in self.known for card in cards}
        seen_set = set(seen) | placed
        unseen = tuple(card for card in deck if card not in seen_set)
        counts = tuple(
            size - len(known) for size, known in zip(self.sizes, self.known, strict=True)
        )
        if any(count < 0 for count in counts) or sum(counts) != len(unseen):
            raise InvalidInput("the observation is inconsistent: the hidden cards do not add up")
        return HiddenCards(
            self.seat,
            tuple(self.places),
            counts,
            unseen,
            tuple(frozenset(cards) for cards in self.excluded),
            tuple(tuple(cards) for cards in self.known),
        )


# -- reading observations ------------------------------------------------------------------
def _cards(value: Any) -> list[Card]:
    return [parse_card(text) for text in value or []]


def _seat(observation: Mapping[str, Any]) -> int:
    seat = observation.get("seat")
    if seat is None:
        raise InvalidInput("a spectator's view has no hidden cards to sample for a seat")
    return int(seat)


def _plays(observation: Mapping[str, Any], direction: int) -> list[_Play]:
    """Every card played this deal, in order, with its trick so far."""
    players = int(observation["players"])
    plays: list[_Play] = []
    tricks = list(observation.get("tricks") or [])
    for number, trick in enumerate(tricks):
        leader = int(trick["leader"])
        cards = _cards(trick["cards"])
        for position, card in enumerate(cards):
            seat = (leader + direction * position) % players
            plays.append(_Play(seat, card, tuple(cards[:position]), number))
    current = [(int(entry["seat"]), parse_card(entry["card"])) for entry in observation["trick"]]
    for position, (seat, card) in enumerate(current):
        before = tuple(card for _, card in current[:position])
        plays.append(_Play(seat, card, before, len(tricks)))
    return plays


def _suit_cards(deck: Sequence[Card], suit: int) -> list[Card]:
    return [card for card in deck if SUIT_OF[card] == suit]


def _exclude_voids(layout: _Layout, deck: Sequence[Card], plays: list[_Play]) -> None:
    """A player who did not follow the suit led has none of it (docs/rules.md, common rules)."""
    for play in plays:
        if play.trick and SUIT_OF[play.card] != SUIT_OF[play.trick[0]]:
            layout.exclude(play.seat, _suit_cards(deck, SUIT_OF[play.trick[0]]))


def _exclude_must_trump(
    layout: _Layout, deck: Sequence[Card], plays: list[_Play], trump: int
) -> None:
    """With "must trump when void" on, a void player who did not trump has no trump."""
    if trump < 0:
        return
    for play in plays:
        suit = SUIT_OF[play.card]
        if play.trick and suit != SUIT_OF[play.trick[0]] and suit != trump:
            layout.exclude(play.seat, _suit_cards(deck, trump))


def _common_snapshot(
    observation: Mapping[str, Any], first_dealer: int, state: dict[str, Any]
) -> dict[str, Any]:
    return {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "game": observation["game"],
        "players": int(observation["players"]),
        "options": dict(observation.get("options") or {}),
        "first_dealer": first_dealer,
        "dealer": int(observation["dealer"]),
        "deal_number": int(observation["deal_number"]),
        "deal_scores": [[int(score) for score in row] for row in observation["deal_scores"]],
        "totals": [int(total) for total in observation["totals"]],
        "over": bool(observation["over"]),
        "state": state,
    }


def _tricks_json(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "leader": int(trick["leader"]),
            "cards": list(trick["cards"]),
            "winner": int(trick["winner"]),
        }
        for trick in observation.get("tricks") or []
    ]


def _trick_cards(observation: Mapping[str, Any]) -> list[str]:
    return [str(entry["card"]) for entry in observation["trick"]]


def _player(observation: Mapping[str, Any]) -> int:
    to_act = observation.get("to_act") or []
    return int(to_act[0]) if to_act else 0


def _first_dealer(observation: Mapping[str, Any], direction: int) -> int:
    """The first dealer, from the dealer and the deal number: the deal passes each deal."""
    players = int(observation["players"])
    deals = max(int(observation["deal_number"]) - 1, 0)
    return (int(observation["dealer"]) - direction * deals) % players


def _full_places(hidden: HiddenCards, placement: Sequence[Sequence[Card]]) -> list[list[Card]]:
    if len(placement) != len(hidden.places):
        raise InvalidInput(f"a placement has one list per place ({len(hidden.places)})")
    # Kept in placement order: the order of Belote's stock decides who gets which cards.
    return [[*known, *placed] for known, placed in zip(hidden.known, placement, strict=True)]


# -- the games ------------------------------------------------------------------------------
class _GameView:
    """How one game's observation splits into what is seen and what is hidden."""

    extra_places: tuple[str, ...] = ()
    direction = 1

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        raise NotImplementedError

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        raise NotImplementedError

    def _new_layout(self, observation: Mapping[str, Any]) -> _Layout:
        if observation.get("phase") in ("deal", "over"):
            raise InvalidInput("there are no cards in play between deals")
        seat = _seat(observation)
        layout = _Layout(seat, int(observation["players"]), self.extra_places)
        for other, size in enumerate(observation["hand_sizes"]):
            layout.sizes[other] = int(size)
        layout.known[seat] = _cards(observation["hand"])
        return layout


class _WhistView(_GameView):
    """Whist: the other hands and the stock (the cards not dealt, under the turned card)."""

    extra_places = (STOCK,)

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        players = int(observation["players"])
        deck = whist.whist_deck(players)
        turned = _cards([observation["turned_up"]] if observation.get("turned_up") else [])
        layout.sizes[layout.index(STOCK)] = (
            len(deck) - players * int(observation["cards_each"]) - len(turned)
        )
        plays = _plays(observation, self.direction)
        _exclude_voids(layout, deck, plays)
        if (observation.get("options") or {}).get("must_trump"):
            trump = SUIT_LETTERS.find(observation["trump"]) if observation["trump"] else -1
            _exclude_must_trump(layout, deck, plays, trump)
        seen = [*layout.known[layout.seat], *(play.card for play in plays), *turned]
        return layout.hidden(deck, seen)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        players = int(observation["players"])
        state = {
            "phase": observation["phase"],
            "hands": [card_texts(cards) for cards in places[:players]],
            "turned_up": observation.get("turned_up"),
            "bids": [None if bid is None else int(bid) for bid in observation["bids"]],
            "tricks": [trick["cards"] for trick in _tricks_json(observation)],
            "trick": _trick_cards(observation),
        }
        return _common_snapshot(observation, _first_dealer(observation, 1), state)


_HEARTS_OFFSETS = {name: offset for offset, name in hearts.PASS_DIRECTION_NAMES.items()}


class _HeartsView(_GameView):
    """Hearts: the other three hands; the cards a seat passed sit with their receiver."""

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        deck = FULL_DECK
        plays = _plays(observation, self.direction)
        played = {play.card for play in plays}
        if observation["phase"] == HeartsPhase.PLAY:
            receiver = (seat + _HEARTS_OFFSETS[observation["pass_direction"]]) % hearts.PLAYERS
            passed = [card for card in _cards(observation["passed"]) if card not in played]
            if receiver != seat:
                layout.known[receiver].extend(passed)
        _exclude_voids(layout, deck, plays)
        non_hearts = [card for card in deck if SUIT_OF[card] != HEARTS]
        unsafe = {*_suit_cards(deck, HEARTS), hearts.QUEEN_OF_SPADES}
        broken = False
        for play in plays:
            suit = SUIT_OF[play.card]
            # Leading a heart before hearts are broken: the leader held only hearts.
            if not play.trick and suit == HEARTS and not broken:
                layout.exclude(play.seat, non_hearts)
            # A heart or the queen of spades on the first trick: the player had nothing else.
            if (
                play.trick_number == 0
                and play.trick
                and suit != SUIT_OF[play.trick[0]]
                and play.card in unsafe
            ):
                layout.exclude(play.seat, [card for card in deck if card not in unsafe])
            broken = broken or suit == HEARTS
        seen = [*layout.known[seat], *played]
        return layout.hidden(deck, seen)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        seat = _seat(observation)
        phase = observation["phase"]
        offset = _HEARTS_OFFSETS[observation["pass_direction"]]
        # Passes another seat chose are hidden. Once play starts they are over (marked chosen,
        # cards unknown); during the pass phase they are left to be chosen again.
        passes: list[list[str] | None] = [
            [] if offset and phase == HeartsPhase.PLAY else None for _ in range(hearts.PLAYERS)
        ]
        received: list[list[str]] = [[] for _ in range(hearts.PLAYERS)]
        if observation.get("passed"):
            passes[seat] = list(observation["passed"])
        if phase == HeartsPhase.PLAY:
            received[seat] = list(observation.get("received") or [])
        state = {
            "phase": phase,
            "hands": [card_texts(cards) for cards in places[: hearts.PLAYERS]],
            "pass_offset": offset,
            "passes": passes,
            "received": received,
            "trick": _trick_cards(observation),
            "leader": int(observation.get("leader") or 0),
            "player": _player(observation) if phase == HeartsPhase.PLAY else 0,
            "tricks": _tricks_json(observation),
            "hearts_broken": bool(observation["hearts_broken"]),
            "points": [int(points) for points in observation["points"]],
        }
        return _common_snapshot(observation, _first_dealer(observation, 1), state)


_PLACEHOLDER = "2C"


class _ThreeFiveEightView(_GameView):
    """3-5-8: the other hands, the talon until the declarer takes it, then the discard pile.

    While the contract is chosen each seat sees only its first 6 cards, so its own hand holds
    10 unseen cards too.
    """

    extra_places = (TALON, DISCARDED)

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        phase = observation["phase"]
        deck = FULL_DECK
        declarer = int(observation["declarer"])
        talon, discarded = layout.index(TALON), layout.index(DISCARDED)
        talon_taken = phase in (ThreeFiveEightPhase.DISCARD, ThreeFiveEightPhase.PLAY)
        layout.sizes[talon] = 0 if talon_taken else three_five_eight.TALON_SIZE
        if phase == ThreeFiveEightPhase.PLAY:
            layout.sizes[discarded] = three_five_eight.TALON_SIZE
            if seat == declarer:
                layout.known[discarded] = _cards(observation["discarded"])
        plays = _plays(observation, self.direction)
        played = {play.card for play in plays}
        self._exchanges(observation, layout, talon_taken, played)
        _exclude_voids(layout, deck, plays)
        if (observation.get("options") or {}).get("trump_beat"):
            trump = SUIT_LETTERS.find(observation["trump"]) if observation["trump"] else -1
            _exclude_must_trump(layout, deck, plays, trump)
        seen = [*layout.known[seat], *layout.known[discarded], *played]
        return layout.hidden(deck, seen)

    @staticmethod
    def _exchanges(
        observation: Mapping[str, Any], layout: _Layout, talon_taken: bool, played: set[Card]
    ) -> None:
        """What the seat learnt from the exchanges it took part in (docs/rules.md, card exchange).

        The debtor gives back the highest card it holds in the suit of the card received, so
        it held nothing higher, and never will this deal (whatever it receives later, its
        highest goes back) unless it is the declarer and has taken the talon. The card each
        side received stays with it, unless it took part in a later exchange the seat did not
        see (then it may be with the other side of that one too) or it is the declarer, who
        may have put it away with the talon.
        """
        seat = layout.seat
        declarer = int(observation["declarer"])
        deck = FULL_DECK
        exchanges = list(observation.get("exchanges") or [])
        possible: dict[Card, set[int]] = {}
        for index, exchange in enumerate(exchanges):
            if exchange.get("given") is None:
                continue
            creditor, debtor = int(exchange["creditor"]), int(exchange["debtor"])
            given, returned = parse_card(exchange["given"]), parse_card(exchange["returned"])
            if debtor != seat and not (debtor == declarer and talon_taken):
                layout.exclude(
                    debtor,
                    [card for card in deck if SUIT_OF[card] == SUIT_OF[given] and card > returned],
                )
            # After an exchange the seat saw, the card it got is in its own hand (it knows
            # where that goes next) and the card it handed over is with the other side. A
            # card given and sent straight back ends with the creditor.
            got: Card | None
            handed: Card | None
            if seat == creditor:
                other, got, handed = debtor, returned, (given if given != returned else None)
            else:
                other, got, handed = creditor, (given if given != returned else None), returned
            if got is not None:
                possible.pop(got, None)
            if handed is None:
                continue
            places = {other}
            for later in exchanges[index + 1 :]:
                pair = {int(later["creditor"]), int(later["debtor"])}
                if seat not in pair and places & pair:
                    places |= pair
            possible[handed] = places
        mine = set(layout.known[seat])
        discarded = layout.index(DISCARDED)
        for card, places in possible.items():
            if card in mine or card in played:
                continue
            if declarer in places and layout.sizes[discarded]:
                places = places | {discarded}
            if len(places) == 1:
                layout.known[next(iter(places))].append(card)
            else:
                for place in range(len(layout.places)):
                    if place not in places:
                        layout.exclude(place, [card])

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        seat = _seat(observation)
        phase = observation["phase"]
        players = three_five_eight.PLAYERS
        declarer = int(observation["declarer"])
        hands = places[:players]
        talon = places[players]
        discarded = places[players + 1]
        first_cards: list[list[Card]] = [[] for _ in range(players)]
        if phase == ThreeFiveEightPhase.CONTRACT:
            first_cards = [hand[: three_five_eight.FIRST_CARDS] for hand in hands]
            first_cards[seat] = _cards(observation["hand"])
        if phase in (ThreeFiveEightPhase.DISCARD, ThreeFiveEightPhase.PLAY):
            if seat == declarer:
                talon = _cards(observation["talon"])
            elif phase == ThreeFiveEightPhase.PLAY:
                talon = discarded
            else:
                talon = hands[declarer][-three_five_eight.TALON_SIZE :]
        state = {
            "phase": phase,
            "hands": [card_texts(hand) for hand in hands],
            "first_cards": [card_texts(cards) for cards in first_cards],
            "talon": card_texts(talon),
            "discarded": card_texts(discarded),
            "contract": observation["contract"],
            "used_contracts": [list(used) for used in observation["used_contracts"]],
            "exchange_queue": [
                [int(owed["creditor"]), int(owed["debtor"]), int(owed["count"])]
                for owed in observation.get("exchanges_owed") or []
            ],
            # The cards of an exchange the seat did not see are hidden from it in any world,
            # and play never reads them: a placeholder keeps the record of who exchanged.
            "exchanges": [
                {
                    "creditor": int(exchange["creditor"]),
                    "debtor": int(exchange["debtor"]),
                    "given": exchange.get("given") or _PLACEHOLDER,
                    "returned": exchange.get("returned") or _PLACEHOLDER,
                }
                for exchange in observation.get("exchanges") or []
            ],
            "skipped": [
                [int(skipped["creditor"]), int(skipped["count"])]
                for skipped in observation.get("exchanges_skipped") or []
            ],
            "trick": _trick_cards(observation),
            "leader": int(observation.get("leader") or 0),
            "player": _player(observation),
            "tricks": _tricks_json(observation),
            "tricks_won": [int(won) for won in observation["tricks_won"]],
        }
        return _common_snapshot(observation, _first_dealer(observation, 1), state)


class _BeloteView(_GameView):
    """Belote: the other hands, and the stock while the bidding lasts.

    The turned card is public; once taken it sits in the taker's hand until played.
    """

    extra_places = (STOCK,)
    direction = -1

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        deck = belote.DECK
        turned = parse_card(observation["turned_card"])
        plays = _plays(observation, self.direction)
        played = {play.card for play in plays}
        taker = observation.get("taker")
        if observation["phase"] == BelotePhase.BID:
            layout.sizes[layout.index(STOCK)] = len(deck) - belote.TURNED_INDEX - 1
        elif taker is not None and int(taker) != seat and turned not in played:
            layout.known[int(taker)].append(turned)
        if observation.get("trump"):
            self._exclude_by_play(layout, plays, SUIT_LETTERS.index(observation["trump"]))
        seen = [*layout.known[seat], *played, turned]
        return layout.hidden(deck, seen)

    @staticmethod
    def _exclude_by_play(layout: _Layout, plays: list[_Play], trump: int) -> None:
        """docs/rules.md, Belote, "Play": what a card played shows about the rest of the hand.

        Not following shows a void. On a trump lead, a trump that does not beat the highest
        shows no higher trump, and no trump at all shows a void in trumps. Void in a plain
        suit led while the partner is not winning, a card that is not a trump shows no trump,
        and a trump under a trump already in the trick shows no higher one.
        """
        strength = belote.STRENGTH[trump]
        deck = belote.DECK
        trumps = _suit_cards(deck, trump)
        for play in plays:
            if not play.trick:
                continue
            led = SUIT_OF[play.trick[0]]
            suit = SUIT_OF[play.card]
            best_position = 0
            for position, card in enumerate(play.trick):
                if (
                    SUIT_OF[card] in (led, trump)
                    and strength[card] > strength[play.trick[best_position]]
                ):
                    best_position = position
            best = strength[play.trick[best_position]]
            winner = (play.seat + len(play.trick) - best_position) % belote.PLAYERS
            higher = [card for card in trumps if strength[card] > best]
            if suit != led:
                layout.exclude(play.seat, _suit_cards(deck, led))
            if led == trump:
                if suit != trump:
                    layout.exclude(play.seat, trumps)
                elif strength[play.card] < best:
                    layout.exclude(play.seat, higher)
                continue
            if suit == led or winner == (play.seat + 2) % belote.PLAYERS:
                continue
            if suit != trump:
                layout.exclude(play.seat, trumps)
            elif strength[play.card] < best:
                # Only a trump already in the trick can be stronger than a trump.
                layout.exclude(play.seat, higher)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        phase = observation["phase"]
        stock = places[belote.PLAYERS] if phase == BelotePhase.BID else []
        taker = observation.get("taker")
        state = {
            "phase": phase,
            "hands": [card_texts(cards) for cards in places[: belote.PLAYERS]],
            # The placement's order is the dealing order of the rest of the deck.
            "stock": card_texts(stock),
            "turned_card": observation["turned_card"],
            "bids": [
                {"seat": int(bid["seat"]), "bid": str(bid["bid"])} for bid in observation["bids"]
            ],
            "trump": observation.get("trump") or None,
            "taker": None if taker is None else int(taker),
            "trick": _trick_cards(observation),
            "leader": int(observation.get("leader") or 0),
            "player": _player(observation),
            "tricks": _tricks_json(observation),
        }
        return _common_snapshot(observation, _first_dealer(observation, -1), state)


_VIEWS: dict[str, _GameView] = {
    whist.WHIST.name: _WhistView(),
    hearts.HEARTS.name: _HeartsView(),
    three_five_eight.THREE_FIVE_EIGHT.name: _ThreeFiveEightView(),
    belote.BELOTE.name: _BeloteView(),
}


def _view(observation: Mapping[str, Any]) -> _GameView:
    view = _VIEWS.get(str(observation.get("game")))
    if view is None:
        raise InvalidInput(f"cannot determinize a view of game {observation.get('game')!r}")
    return view


def hidden_cards(observation: Mapping[str, Any]) -> HiddenCards:
    """What the observing seat does not see: the unseen cards, their places and limits.

    ``observation`` is ``state.observation(seat)`` (numbers as ints) during a deal.
    """
    return _view(observation).hidden(observation)


def state_from_view(
    observation: Mapping[str, Any],
    placement: Sequence[Sequence[Card]],
    hidden: HiddenCards | None = None,
) -> GameState:
    """The whole state the observation shows, with ``placement[i]`` in place ``i``.

    ``placement`` must put exactly ``counts[i]`` unseen cards in each place, none excluded;
    the engine's snapshot checks reject a placement that breaks the rules. ``hidden`` is
    :func:`hidden_cards` of the same observation, if the caller has it already.
    """
    view = _view(observation)
    if hidden is None:
        hidden = view.hidden(observation)
    places = _full_places(hidden, placement)
    for index, cards in enumerate(placement):
        if len(cards) != hidden.counts[index]:
            raise InvalidInput(f"place {hidden.places[index]} holds {hidden.counts[index]} cards")
        if any(card in hidden.excluded[index] for card in cards):
            raise InvalidInput(f"place {hidden.places[index]} cannot hold one of those cards")
    spec = game_spec(str(observation["game"]))
    return spec.state_type.from_snapshot(view.snapshot(observation, places))
