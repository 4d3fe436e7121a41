"""Invariants every game must keep, checked from the facts of random playouts.

These are test oracles, not rules: they state what must hold whatever the rules decide
(every card dealt once, a trick holds one card per seat, the engine's own snapshot check
passes at the end of each deal) plus the score sums docs/rules.md guarantees for each game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cardtable.engine.actions import Action
from cardtable.engine.cards import format_cards
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import CardPlayed, CardsDealt, DealScored, Fact, TrickWon
from cardtable.engine.game import GameState

#: What each game guarantees about one deal's scores or card points (docs/rules.md).
DealCheck = Callable[[DealScored, list[TrickWon]], str | None]


def _hearts_points(scored: DealScored, tricks: list[TrickWon]) -> str | None:
    total = sum(scored.scores)
    return None if total in (26, 78) else f"Hearts deal scores total {total}, not 26 or 78"


def _zero_sum(scored: DealScored, tricks: list[TrickWon]) -> str | None:
    total = sum(scored.scores)
    return None if total == 0 else f"3-5-8 deal scores total {total}, not 0"


def _belote_card_points(scored: DealScored, tricks: list[TrickWon]) -> str | None:
    total = sum(trick.points for trick in tricks)
    return None if total == 162 else f"Belote card points total {total}, not 162"


DEAL_CHECKS: dict[str, DealCheck] = {
    "hearts": _hearts_points,
    "358": _zero_sum,
    "belote": _belote_card_points,
}


@dataclass
class InvariantChecker:
    """An observer for :func:`play_random_game` that collects invariant violations."""

    violations: list[str] = field(default_factory=list)
    max_kept: int = 50
    _dealt: set[int] = field(default_factory=set)
    _played: set[int] = field(default_factory=set)
    _tricks: list[TrickWon] = field(default_factory=list)

    def _violate(self, state: GameState, message: str) -> None:
        if len(self.violations) < self.max_kept:
            self.violations.append(f"{state.spec.name} deal {state.deal_number}: {message}")

    def __call__(
        self, state: GameState, seat: int | None, action: Action | None, facts: list[Fact]
    ) -> None:
        if seat is None:
            self._dealt, self._played, self._tricks = set(), set(), []
        if seat is not None and not facts:
            self._violate(state, f"seat {seat}'s action {action} produced no fact")
        for fact in facts:
            if isinstance(fact, CardsDealt):
                self._check_dealt(state, fact)
            elif isinstance(fact, CardPlayed):
                if fact.card in self._played:
                    self._violate(state, f"card {format_cards([fact.card])} played twice")
                self._played.add(fact.card)
            elif isinstance(fact, TrickWon):
                self._check_trick(state, fact)
            elif isinstance(fact, DealScored):
                self._check_deal(state, fact)
        if not state.is_over() and not state.needs_deal():
            if not state.to_act():
                self._violate(state, "nobody may act, yet the game is not over")
            elif not any(
                state.card_set_choice(other) or state.legal_actions(other)
                for other in state.to_act()
            ):
                self._violate(state, "a seat must act but has no legal action")

    def _check_dealt(self, state: GameState, fact: CardsDealt) -> None:
        repeated = self._dealt.intersection(fact.cards)
        if repeated or len(set(fact.cards)) != len(fact.cards):
            self._violate(state, f"card dealt twice: {format_cards(sorted(repeated))}")
        if not set(fact.cards) <= set(state.deck()):
            self._violate(state, "a card outside the game's deck was dealt")
        if fact.audience != (fact.seat,):
            self._violate(state, f"seat {fact.seat}'s cards are visible to {fact.audience}")
        self._dealt.update(fact.cards)

    def _check_trick(self, state: GameState, fact: TrickWon) -> None:
        if len(fact.cards) != state.num_players or len(set(fact.cards)) != len(fact.cards):
            self._violate(state, f"trick {fact.trick_number} holds {format_cards(fact.cards)}")
        self._tricks.append(fact)

    def _check_deal(self, state: GameState, fact: DealScored) -> None:
        check = DEAL_CHECKS.get(state.spec.name)
        problem = check(fact, self._tricks) if check else None
        if problem:
            self._violate(state, problem)
        try:
            type(state).from_snapshot(state.to_snapshot())
        except InvalidInput as error:
            self._violate(state, f"the state's own snapshot check fails: {error}")
