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
   A :class:`WorldBuilder` does the same for many placements of one observation: the first
   through the loader, the others as copies of it with the hidden places refilled
   (:meth:`~cardtable.engine.game.GameState.with_hidden_cards`), the same states for a
   fraction of the work.

What is hidden where is game-specific: each game's ``view.py`` says it (a
:class:`~cardtable.engine.hidden.GameView`), found through the game's registered definition.

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

from collections.abc import Mapping, Sequence
from typing import Any

from cardtable.engine.cards import Card
from cardtable.engine.definition import GameDefinition
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import GameState
from cardtable.engine.hidden import HiddenCards
from cardtable.engine.registry import DEFINITIONS

__all__ = ["HiddenCards", "WorldBuilder", "hidden_cards", "state_from_view"]


def _full_places(hidden: HiddenCards, placement: Sequence[Sequence[Card]]) -> list[list[Card]]:
    if len(placement) != len(hidden.places):
        raise InvalidInput(f"a placement has one list per place ({len(hidden.places)})")
    # Kept in placement order: the order of Belote's stock decides who gets which cards.
    return [[*known, *placed] for known, placed in zip(hidden.known, placement, strict=True)]


def _game(observation: Mapping[str, Any]) -> GameDefinition:
    game = DEFINITIONS.get(str(observation.get("game")))
    if game is None:
        raise InvalidInput(f"cannot determinize a view of game {observation.get('game')!r}")
    return game


def hidden_cards(observation: Mapping[str, Any]) -> HiddenCards:
    """What the observing seat does not see: the unseen cards, their places and limits.

    ``observation`` is ``state.observation(seat)`` (numbers as ints) during a deal.
    """
    return _game(observation).view.hidden(observation)


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
    return WorldBuilder(observation, hidden).build(placement)


def _checked_places(hidden: HiddenCards, placement: Sequence[Sequence[Card]]) -> list[list[Card]]:
    """Every place's cards, known and placed, once the placement is found to fit."""
    places = _full_places(hidden, placement)
    for index, cards in enumerate(placement):
        if len(cards) != hidden.counts[index]:
            raise InvalidInput(f"place {hidden.places[index]} holds {hidden.counts[index]} cards")
        if any(card in hidden.excluded[index] for card in cards):
            raise InvalidInput(f"place {hidden.places[index]} cannot hold one of those cards")
    return places


class WorldBuilder:
    """Whole states of one observation, one per placement of its unseen cards.

    The first is loaded from its snapshot, every rule checked; the others are copies of it
    with the hidden places refilled: the snapshot of a placement differs from another's only
    in those places, and each placement is checked to fit them (counts, exclusions), so the
    copies are the states the loader would build (a test compares them field by field).
    """

    def __init__(self, observation: Mapping[str, Any], hidden: HiddenCards | None = None) -> None:
        self.observation = observation
        self.game = _game(observation)
        self.hidden = self.game.view.hidden(observation) if hidden is None else hidden
        self._template: GameState | None = None

    def build(self, placement: Sequence[Sequence[Card]]) -> GameState:
        """The whole state the observation shows, with ``placement[i]`` in place ``i``."""
        places = _checked_places(self.hidden, placement)
        snapshot = self.game.view.snapshot(self.observation, places)
        if self._template is None:
            self._template = self.game.spec.state_type.from_snapshot(snapshot)
            return self._template.clone()
        world = self._template.with_hidden_cards(snapshot["state"])
        if world is None:
            return self.game.spec.state_type.from_snapshot(snapshot)
        return world
