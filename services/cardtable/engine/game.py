"""The one small API every game implements, and the bookkeeping all games share.

The model follows OpenSpiel: a game is a phase machine; dealing is a chance step whose outcome
(a deck order) is supplied by the caller, never drawn inside the engine; ``legal_actions`` and
``apply`` dispatch on the phase. A game is fully determined by its options, its first dealer,
its deck orders and its list of actions, so replaying a game is re-applying that list.

Life of a state::

    state = spec.new_game(players=4, options={}, first_dealer=0)
    while not state.is_over():
        if state.needs_deal():
            facts = state.deal(deck_order)           # a permutation of state.deck()
        else:
            seat = state.to_act()[0]
            facts = state.apply(seat, state.legal_actions(seat)[0])

Several seats may be able to act at once (Hearts' passing), so ``to_act`` is a tuple.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Self

from cardtable.engine.actions import Action, format_action
from cardtable.engine.cards import Card, card_texts, check_deck_order
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.facts import Fact, GameEnded
from cardtable.engine.options import options_to_dict, read_options
from cardtable.engine.ranking import places_from_totals
from cardtable.engine.snapshot import (
    SNAPSHOT_FORMAT,
    read_int,
    read_int_list,
    read_list,
    read_str,
    require,
)

SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class GameSpec:
    """What a game is, for lobbies and the rules service: name, player counts, options."""

    name: str
    title: str
    min_players: int
    max_players: int
    options_type: type
    state_type: type[GameState]
    lower_is_better: bool = False
    teams: tuple[tuple[int, ...], ...] = ()
    #: The game ends at once when every other person has left (Whist, docs/rules.md).
    ends_when_one_person_remains: bool = False
    #: The way play and the deal pass: +1 to the left (seat + 1), -1 to the right (Belote).
    direction: int = 1

    def new_game(
        self, players: int, options: Mapping[str, Any] | Any = None, first_dealer: int = 0
    ) -> GameState:
        """A fresh game waiting for its first deal."""
        if not self.min_players <= players <= self.max_players:
            allowed = (
                str(self.min_players)
                if self.min_players == self.max_players
                else f"{self.min_players} to {self.max_players}"
            )
            raise InvalidInput(f"{self.title} is played by {allowed} players, not {players}")
        if not 0 <= first_dealer < players:
            raise InvalidInput(f"the first dealer must be a seat from 0 to {players - 1}")
        if options is None or isinstance(options, Mapping):
            options = read_options(self.options_type, options)
        elif not isinstance(options, self.options_type):
            raise InvalidInput(f"options for {self.title} must be {self.options_type.__name__}")
        return self.state_type(players, options, first_dealer)


@dataclass(frozen=True)
class CardSetChoice:
    """A compound action: any ``count`` distinct cards of ``cards``, made by ``make``."""

    cards: tuple[Card, ...]
    count: int
    make: Callable[[Iterable[Card]], Action]


class GameState(ABC):
    """A game in progress. Subclasses implement the phases; this class keeps the shared parts.

    Shared bookkeeping: the dealer and deal number, every deal's scores and the running totals,
    and the end of the game with its places.
    """

    spec: ClassVar[GameSpec]

    def __init__(self, num_players: int, options: Any, first_dealer: int) -> None:
        self.num_players = num_players
        self.options = options
        self.first_dealer = first_dealer
        self.dealer = first_dealer
        self.deal_number = 0
        self.deal_scores: list[tuple[int, ...]] = []
        self.totals: list[int] = [0] * num_players
        self.over = False

    # -- the chance step -------------------------------------------------------------------
    @abstractmethod
    def deck(self) -> tuple[Card, ...]:
        """The cards of this game, sorted; a deck order is a permutation of them."""

    @abstractmethod
    def needs_deal(self) -> bool:
        """Whether the next step is a deal (the caller must supply a deck order)."""

    def deal(self, order: Sequence[Card]) -> list[Fact]:
        """Deal from ``order`` (top of the deck first) and return the facts of the deal."""
        if self.over:
            raise IllegalAction("the game is over")
        if not self.needs_deal():
            raise IllegalAction("the cards are already dealt")
        return self._deal(check_deck_order(order, self.deck()))

    @abstractmethod
    def _deal(self, order: tuple[Card, ...]) -> list[Fact]: ...

    # -- turns and actions -----------------------------------------------------------------
    @property
    @abstractmethod
    def phase(self) -> str:
        """The current phase's name (``bid``, ``play``, ...), ``deal`` or ``over``."""

    @abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """The seats that may act now; empty while a deal is needed or once the game is over."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now, in a fixed order; empty if it may not act."""

    def card_set_choice(self, seat: int) -> CardSetChoice | None:
        """For a compound action (pass three cards, discard four), the set to choose from.

        Any ``count`` distinct cards of ``cards`` make a legal action, so a random player or a
        bot can sample one directly instead of listing every combination (286 ways to pass,
        4,845 ways to discard). ``None`` when the seat's legal actions are not of that shape.
        """
        return None

    def interchangeable_plays(self, seat: int, cards: Sequence[Card]) -> list[list[Card]]:
        """``cards`` (some the seat may play) grouped into those that are interchangeable for
        it (:mod:`cardtable.engine.interchangeable`); a game that does not say keeps each
        alone."""
        return [[card] for card in cards]

    @abstractmethod
    def _why_illegal(self, seat: int, action: Action) -> str | None:
        """Why ``action`` is illegal for ``seat``, once turn and phase are known to fit."""

    @abstractmethod
    def _apply(self, seat: int, action: Action) -> list[Fact]:
        """Apply an action already known to be legal."""

    def why_illegal(self, seat: int, action: Action) -> str | None:
        """A sentence for the player on why ``action`` is not allowed now, or ``None``."""
        if self.over:
            return "the game is over"
        if not 0 <= seat < self.num_players:
            return f"there is no seat {seat} at this table"
        if self.needs_deal():
            return "the cards have not been dealt yet"
        if seat not in self.to_act():
            waiting = ", ".join(str(other) for other in self.to_act())
            return f"it is not your turn: waiting for seat {waiting}"
        return self._why_illegal(seat, action)

    def apply(self, seat: int, action: Action) -> list[Fact]:
        """Apply ``action`` for ``seat``; raises :class:`IllegalAction` saying why if illegal."""
        reason = self.why_illegal(seat, action)
        if reason is not None:
            raise IllegalAction(reason)
        return self._apply(seat, action)

    def apply_trusted(self, seat: int, action: Action) -> list[Fact]:
        """Apply an action its caller chose among :meth:`legal_actions` for the seat to act,
        unchecked: for a search's playouts on its own copies, where the check is a tenth of
        the cost. Anything that comes from outside goes through :meth:`apply`."""
        return self._apply(seat, action)

    # -- results ---------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.over

    def places(self) -> tuple[int, ...] | None:
        """Each seat's final place (1 = best, ties share) once the game is over."""
        if not self.over:
            return None
        return places_from_totals(self.totals, lower_is_better=self.spec.lower_is_better)

    @abstractmethod
    def progress(self) -> float:
        """The share of the game completed, 0 to 1; the leaver deduction scales by it."""

    def _start_next_deal(self, direction: int) -> None:
        """Count a new deal; from the second on, the deal passes in ``direction`` (+1/-1)."""
        if self.deal_number:
            self.dealer = (self.dealer + direction) % self.num_players
        self.deal_number += 1

    def _record_deal_scores(self, scores: Sequence[int]) -> tuple[int, ...]:
        """Add one deal's scores to the history and the totals; return the new totals."""
        self.deal_scores.append(tuple(scores))
        for seat, score in enumerate(scores):
            self.totals[seat] += score
        return tuple(self.totals)

    def _end_game(self) -> GameEnded:
        self.over = True
        places = self.places()
        assert places is not None
        return GameEnded(tuple(self.totals), places)

    # -- views -----------------------------------------------------------------------------
    def observation(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know now (``None``: a spectator), as a JSON-ready dict.

        Shared keys come from here; each game adds its own. Never holds a card of another
        seat's hand that has not been played or shown to ``seat``.
        """
        can_act = seat is not None and not self.over and seat in self.to_act()
        choice = self.card_set_choice(seat) if can_act and seat is not None else None
        listed = can_act and seat is not None and choice is None
        return {
            "game": self.spec.name,
            "players": self.num_players,
            "seat": seat,
            # The table's options are public, and a bot needs them to simulate the right rules.
            "options": options_to_dict(self.options),
            "phase": self.phase,
            "deal_number": self.deal_number,
            "dealer": self.dealer,
            "to_act": list(self.to_act()),
            "deal_scores": [list(scores) for scores in self.deal_scores],
            "totals": list(self.totals),
            "over": self.over,
            "places": list(self.places() or []),
            # Compound actions (pass three, discard four) are described, not listed: there
            # are hundreds or thousands of combinations and any of them is legal.
            "legal_actions": (
                [format_action(action) for action in self.legal_actions(seat)]
                if listed and seat is not None
                else []
            ),
            "choose_cards": (
                {
                    "verb": format_action(choice.make(choice.cards[: choice.count])).split()[0],
                    "cards": card_texts(choice.cards),
                    "count": choice.count,
                }
                if choice is not None
                else None
            ),
            **self._observation(seat),
        }

    @abstractmethod
    def _observation(self, seat: int | None) -> dict[str, Any]: ...

    def clone(self) -> Self:
        """An independent copy, for search: changing it never changes this state.

        Games override this with :meth:`_shallow_copy` plus copies of their own lists: a deep
        copy is several times slower, and search clones a state for every playout.
        """
        return copy.deepcopy(self)

    def _shallow_copy(self) -> Self:
        """A copy whose shared bookkeeping lists are its own; the game copies the rest."""
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.deal_scores = list(self.deal_scores)
        other.totals = list(self.totals)
        return other

    # -- snapshots -------------------------------------------------------------------------
    def to_snapshot(self) -> dict[str, Any]:
        """The whole state (hidden cards included) as JSON-ready data; server-side only."""
        return {
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "game": self.spec.name,
            "players": self.num_players,
            "options": options_to_dict(self.options),
            "first_dealer": self.first_dealer,
            "dealer": self.dealer,
            "deal_number": self.deal_number,
            "deal_scores": [list(scores) for scores in self.deal_scores],
            "totals": list(self.totals),
            "over": self.over,
            "state": self._snapshot(),
        }

    @abstractmethod
    def _snapshot(self) -> dict[str, Any]:
        """The game's own fields for :meth:`to_snapshot`."""

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a state from :meth:`to_snapshot`'s output, checking every field.

        A snapshot is untrusted input: a malformed or inconsistent one raises
        :class:`InvalidInput` and never yields a state that breaks the rules.
        """
        if not isinstance(data, Mapping):
            raise InvalidInput("a snapshot must be a JSON object")
        read_str(data, "format", [SNAPSHOT_FORMAT])
        read_int(data, "version", SNAPSHOT_VERSION, SNAPSHOT_VERSION)
        read_str(data, "game", [cls.spec.name])
        players = read_int(data, "players", cls.spec.min_players, cls.spec.max_players)
        options = require(data, "options")
        if not isinstance(options, Mapping):
            raise InvalidInput("snapshot field 'options' must be an object")
        first_dealer = read_int(data, "first_dealer", 0, players - 1)
        state = cls.spec.new_game(players, options, first_dealer)
        state.dealer = read_int(data, "dealer", 0, players - 1)
        state.deal_number = read_int(data, "deal_number", 0, 10_000)
        history = read_list(data, "deal_scores", 10_000)
        state.deal_scores = [
            tuple(read_int_list({"scores": row}, "scores", players, -100_000, 100_000))
            for row in history
        ]
        state.totals = read_int_list(data, "totals", players, -1_000_000, 1_000_000)
        sums = [sum(row[seat] for row in state.deal_scores) for seat in range(players)]
        if sums != state.totals:
            raise InvalidInput("snapshot is inconsistent: the totals are not the deal scores' sum")
        over = require(data, "over")
        if not isinstance(over, bool):
            raise InvalidInput("snapshot field 'over' must be true or false")
        state.over = over
        game_fields = require(data, "state")
        if not isinstance(game_fields, Mapping):
            raise InvalidInput("snapshot field 'state' must be an object")
        state._load_snapshot(game_fields)
        if not isinstance(state, cls):  # the spec builds this class; keeps the type exact
            raise InvalidInput(f"snapshot is not a {cls.spec.title} state")
        return state

    @abstractmethod
    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        """Set the game's own fields from a snapshot and check the game's invariants."""

    def with_hidden_cards(self, data: Mapping[str, Any]) -> Self | None:
        """A copy of this state with the cards of the places a seat may not see (hands, a
        stock, a talon) read from ``data``, a snapshot's game fields; everything else kept.

        For search, which builds many worlds of one observation that differ only there: a
        copy costs a fraction of :meth:`from_snapshot`. The caller vouches that ``data``
        differs from this state's snapshot in those places alone and holds as many cards in
        each (:class:`cardtable.engine.determinize.WorldBuilder` checks both). ``None`` for
        a game that does not say which places those are: load the whole snapshot.
        """
        other = self.clone()
        return other if other._load_hidden_places(data) else None

    def _load_hidden_places(self, data: Mapping[str, Any]) -> bool:
        """Read the places a seat may not see from a snapshot's game fields, as the game's
        loader reads them; ``False`` for a game that does not say which they are."""
        return False


class TrickGameState(GameState):
    """A game whose play phase adds one card at a time to tricks (all four games here): the
    cards a seat may play, asked once per action by the rule-based players and so by every
    playout of the search."""

    #: The game's own phase member for playing cards to tricks.
    play_phase: ClassVar[StrEnum]
    hands: list[list[Card]]
    player: int
    _phase: StrEnum

    @abstractmethod
    def _playable(self, hand: list[Card]) -> list[Card]:
        """The cards of ``hand`` the player to act may play (the hot path of every playout)."""

    def playable(self, seat: int) -> list[Card]:
        """The cards ``seat`` may play now: :meth:`legal_actions` as cards, without building
        the actions. The list may be the hand itself: read it, do not change it."""
        if self._phase != self.play_phase or seat != self.player:
            return []
        return self._playable(self.hands[seat])


def trick_json(
    leader: int, cards: Sequence[Card], players: int, direction: int = 1
) -> list[dict[str, Any]]:
    """The trick in progress for an observation: who played which card, in play order."""
    return [
        {"seat": (leader + direction * position) % players, "card": card_texts([card])[0]}
        for position, card in enumerate(cards)
    ]


def tricks_json(tricks: Sequence[tuple[int, Sequence[Card], int]]) -> list[dict[str, Any]]:
    """Finished tricks ``(leader, cards, winner)`` for observations and snapshots."""
    return [
        {"leader": leader, "cards": card_texts(cards), "winner": winner}
        for leader, cards, winner in tricks
    ]


def next_seat(seat: int, players: int, direction: int = 1) -> int:
    """The seat after ``seat`` in the direction of play (+1 left, -1 right)."""
    return (seat + direction) % players
