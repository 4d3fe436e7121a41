"""What one seat does not see: the parts every game's determinization view is built from.

Each game's ``view.py`` (``cardtable.engine.games.<game>.view``) subclasses :class:`GameView`:
it says which places the hidden cards may be in and what the seat's observation rules out, with
the helpers here (the cards played this deal with their tricks, voids shown by not following
suit, the snapshot fields every game shares). :mod:`cardtable.engine.determinize` is the API
bots call; it finds the game's view through the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from cardtable.engine.cards import SUIT_OF, Card, parse_card
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import SNAPSHOT_VERSION
from cardtable.engine.snapshot import SNAPSHOT_FORMAT

#: The undealt cards (Whist under its turned card, Belote's rest of the deck), as a place.
STOCK = "stock"


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

    @cached_property
    def places_for(self) -> Mapping[Card, tuple[int, ...]]:
        """For each unseen card, the places that may hold it, in place order: worked out once,
        as a search draws hundreds of deals from one view."""
        places = range(len(self.places))
        return {
            card: tuple(place for place in places if self.allows(place, card))
            for card in self.unseen
        }


@dataclass
class Play:
    """One card played, with what the rules knew when it was played."""

    seat: int
    card: Card
    trick: tuple[Card, ...]  # the cards of its trick before it, in play order
    trick_number: int  # 0-based within the deal


class Layout:
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
def observed_cards(value: Any) -> list[Card]:
    """Card texts of an observation (a hand, a pile) as cards; none for a missing field."""
    return [parse_card(text) for text in value or []]


def observer_seat(observation: Mapping[str, Any]) -> int:
    """The seat whose observation this is; a spectator's has none to determinize for."""
    seat = observation.get("seat")
    if seat is None:
        raise InvalidInput("a spectator's view has no hidden cards to sample for a seat")
    return int(seat)


def deal_plays(observation: Mapping[str, Any], direction: int) -> list[Play]:
    """Every card played this deal, in order, with its trick so far."""
    players = int(observation["players"])
    plays: list[Play] = []
    tricks = list(observation.get("tricks") or [])
    for number, trick in enumerate(tricks):
        leader = int(trick["leader"])
        cards = observed_cards(trick["cards"])
        for position, card in enumerate(cards):
            seat = (leader + direction * position) % players
            plays.append(Play(seat, card, tuple(cards[:position]), number))
    current = [(int(entry["seat"]), parse_card(entry["card"])) for entry in observation["trick"]]
    for position, (seat, card) in enumerate(current):
        before = tuple(card for _, card in current[:position])
        plays.append(Play(seat, card, before, len(tricks)))
    return plays


def suit_cards(deck: Sequence[Card], suit: int) -> list[Card]:
    """The cards of ``suit`` in ``deck``."""
    return [card for card in deck if SUIT_OF[card] == suit]


def exclude_voids(layout: Layout, deck: Sequence[Card], plays: list[Play]) -> None:
    """A player who did not follow the suit led has none of it (docs/rules.md, common rules)."""
    for play in plays:
        if play.trick and SUIT_OF[play.card] != SUIT_OF[play.trick[0]]:
            layout.exclude(play.seat, suit_cards(deck, SUIT_OF[play.trick[0]]))


def exclude_must_trump(layout: Layout, deck: Sequence[Card], plays: list[Play], trump: int) -> None:
    """With "must trump when void" on, a void player who did not trump has no trump."""
    if trump < 0:
        return
    for play in plays:
        suit = SUIT_OF[play.card]
        if play.trick and suit != SUIT_OF[play.trick[0]] and suit != trump:
            layout.exclude(play.seat, suit_cards(deck, trump))


def view_snapshot(
    observation: Mapping[str, Any], first_dealer: int, state: dict[str, Any]
) -> dict[str, Any]:
    """A whole snapshot: the fields every game shares from ``observation``, ``state`` its own."""
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


def finished_tricks(observation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The deal's finished tricks as a snapshot holds them."""
    return [
        {
            "leader": int(trick["leader"]),
            "cards": list(trick["cards"]),
            "winner": int(trick["winner"]),
        }
        for trick in observation.get("tricks") or []
    ]


def current_trick(observation: Mapping[str, Any]) -> list[str]:
    """The cards of the trick in progress, in play order."""
    return [str(entry["card"]) for entry in observation["trick"]]


def player_to_act(observation: Mapping[str, Any]) -> int:
    """The seat to act now (0 when nobody is), as a snapshot's ``player``."""
    to_act = observation.get("to_act") or []
    return int(to_act[0]) if to_act else 0


def first_dealer(observation: Mapping[str, Any], direction: int) -> int:
    """The first dealer, from the dealer and the deal number: the deal passes each deal."""
    players = int(observation["players"])
    deals = max(int(observation["deal_number"]) - 1, 0)
    return (int(observation["dealer"]) - direction * deals) % players


# -- the base of each game's view ---------------------------------------------------------
class GameView(ABC):
    """How one game's observation splits into what is seen and what is hidden.

    Each game's package has one (``games/<game>/view.py``); :mod:`cardtable.engine.determinize`
    finds it through the game's definition in the registry.
    """

    #: The game's places besides the hands (the stock, a talon ...), in placement order.
    extra_places: tuple[str, ...] = ()
    #: The direction of play, the game spec's.
    direction = 1

    @abstractmethod
    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        """What the observing seat does not see (see ``determinize.hidden_cards``)."""

    @abstractmethod
    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        """The whole state's snapshot, ``places[i]`` (known and placed cards) in place ``i``."""

    def _new_layout(self, observation: Mapping[str, Any]) -> Layout:
        if observation.get("phase") in ("deal", "over"):
            raise InvalidInput("there are no cards in play between deals")
        seat = observer_seat(observation)
        layout = Layout(seat, int(observation["players"]), self.extra_places)
        for other, size in enumerate(observation["hand_sizes"]):
            layout.sizes[other] = int(size)
        layout.known[seat] = observed_cards(observation["hand"])
        return layout
