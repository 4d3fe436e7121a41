"""How a Hearts replay reads: the passing, a moon shot, the points of each trick."""

from __future__ import annotations

from collections.abc import Mapping

from cardtable.engine.cards import card_texts
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.games.hearts.rules import CardsPassed, MoonShot, PassChosen
from cardtable.engine.narration import (
    CardsMark,
    GameNarration,
    Line,
    Part,
    Public,
    ScoreRow,
    Told,
    Tone,
    counted,
    score_row,
)


class HeartsNarration(GameNarration):
    """Hearts: each seat's pass, what the viewpoint received, and the penalty points."""

    trick_points = True

    def start_deal(self, fact: DealStarted, public: Public) -> list[tuple[Part, ...]]:
        direction = public.get("pass_direction", "none")
        return [("no passing" if direction == "none" else f"pass {direction}",)]

    def tell(self, fact: Fact, public: Public) -> list[Told]:
        narrator = self.narrator
        if isinstance(fact, PassChosen):
            direction = public.get("pass_direction", "")
            passes = narrator.does(fact.seat, "pass", "passes")
            return [Line((passes, f" {direction}: ", CardsMark(tuple(card_texts(fact.cards)))))]
        if isinstance(fact, CardsPassed):
            if fact.to_seat != narrator.seat:
                return []
            cards = CardsMark(tuple(card_texts(fact.cards)))
            return [Line((f"you receive from {narrator.who(fact.seat)}: ", cards))]
        if isinstance(fact, MoonShot):
            words = f"{narrator.who(fact.seat)} shot the moon: 0 for them, 26 for everyone else"
            return [Line((words,), Tone.STRONG)]
        return []

    def score_rows(
        self, fact: DealScored, tricks_won: Mapping[int, int], public: Public
    ) -> list[ScoreRow]:
        # Tricks count for nothing in Hearts: only the points in them do.
        return [score_row(fact.scores, signed=False)]

    def seat_notes(self, public: Public, seat: int) -> list[str]:
        points = public.get("points") or []
        if seat < len(points) and points[seat]:
            return [f"{counted(points[seat], 'point')} this deal"]
        return []

    def table_chips(self, public: Public) -> list[str]:
        chips: list[str] = []
        direction = public.get("pass_direction")
        if direction:
            chips.append("no passing" if direction == "none" else f"pass {direction}")
        if public.get("hearts_broken"):
            chips.append("hearts broken")
        return chips
