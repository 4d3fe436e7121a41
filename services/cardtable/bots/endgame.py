"""Exact play of a deal's last tricks in a drawn world: every seat plays its best card.

A playout plays every seat by the playout policy's habits, which misjudge some endings: who
must take the last trick, whether a seat can still duck. Near a deal's end few cards are left,
so the search can afford to play them exactly in the world it drew: each seat, seeing every
hand of that world, plays the card that leads to its best result for the deal (its score
against the others' mean), expecting every later seat to do the same (the max^n rule, which
extends minimax to more than two players, each with its own score). The line they play gives
the deal's scores as a playout's end would.

The tree grows fast with the cards in hand: a Whist ending of three cards each at four seats
plays about 170 cards, one of two about 18, against a playout's 12 and 8. Interchangeable
cards (:mod:`cardtable.engine.interchangeable`) are tried once. Each card applied costs the
search one work unit, as a playout's does.

It plays card plays only: a deal whose ending holds another decision (a declaration) is left
to the playout (:meth:`EndgameSolver.solve` returns ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cardtable.bots.card_plays import chooses_a_card, one_of_each_kind
from cardtable.bots.outlook import advantage_over_others, oriented
from cardtable.engine.actions import Action
from cardtable.engine.cards import Card
from cardtable.engine.game import GameState


def most_cards_held(state: GameState) -> int | None:
    """The most cards any seat still holds; ``None`` for a game that keeps no hands."""
    hands: Sequence[Sequence[Card]] | None = getattr(state, "hands", None)
    if hands is None:
        return None
    return max(len(hand) for hand in hands)


def oriented_scores(state: GameState) -> list[float]:
    """The last deal's scores, higher better for each seat (points count against in Hearts)."""
    return oriented(state.deal_scores[-1], state.spec.lower_is_better)


def distinct_plays(state: GameState, seat: int) -> list[Action] | None:
    """The seat's legal card plays, one of each interchangeable group; ``None`` when its
    decision is not a card play."""
    actions = state.legal_actions(seat)
    if not chooses_a_card(actions):
        return None
    return actions if len(actions) == 1 else one_of_each_kind(state, seat, actions)


@dataclass
class SolvedLine:
    """Where the best play leads: every seat's oriented deal score, and the state at the
    deal's end (for what the end means to the rest of the game)."""

    values: list[float]
    end: GameState


class EndgameSolver:
    """Plays a deal out exactly from a state, counting the cards it applies."""

    def __init__(self) -> None:
        #: Cards applied over every solve so far: the work the search is charged.
        self.applied = 0

    def solve(self, state: GameState) -> SolvedLine | None:
        """The line every seat's best play leads to from ``state`` (not changed) to the end of
        the deal, or ``None`` when a decision other than a card play comes first."""
        return self._solve(state, len(state.deal_scores))

    def _solve(self, state: GameState, deals: int) -> SolvedLine | None:
        if len(state.deal_scores) != deals:
            return SolvedLine(oriented_scores(state), state)
        actor = state.to_act()[0]
        plays = distinct_plays(state, actor)
        if plays is None:
            return None
        best: SolvedLine | None = None
        best_advantage = float("-inf")
        for action in plays:
            child = state.clone()
            child.apply_trusted(actor, action)
            self.applied += 1
            line = self._solve(child, deals)
            if line is None:
                return None
            value = advantage_over_others(line.values, actor)
            # Strictly better only: the first of equals, in the engine's order, is played.
            if value > best_advantage:
                best, best_advantage = line, value
        return best
