"""How a Whist replay reads: the bids, the streak bonuses, the deal's heading and score rows."""

from __future__ import annotations

from collections.abc import Mapping

from cardtable.engine.facts import BidMade, DealScored, DealStarted, Fact
from cardtable.engine.games.whist.rules import StreakBonus
from cardtable.engine.narration import (
    CardMark,
    GameNarration,
    Gathered,
    Line,
    Narrator,
    Part,
    Public,
    ScoreRow,
    SuitMark,
    Told,
    Tone,
    card_words,
    counted,
    score_row,
    tricks_row,
    trump_words,
)


class WhistNarration(GameNarration):
    """Whist: the round of bids on one line, and each seat's bid above its tricks and score."""

    def __init__(self, narrator: Narrator, players: int) -> None:
        super().__init__(narrator, players)
        self.bids: dict[int, int] = {}  # this deal's, for the row above the scores

    def start_deal(self, fact: DealStarted, public: Public) -> list[tuple[Part, ...]]:
        self.bids = {}
        details: list[tuple[Part, ...]] = [(f"{counted(fact.cards_each, 'card')} each",)]
        turned = public.get("turned_up")
        if turned:
            details += [("turned up ", CardMark(turned)), ("trump ", SuitMark(public["trump"]))]
        else:
            details.append(("no trump",))
        return details

    def tell(self, fact: Fact, public: Public) -> list[Told]:
        who = self.narrator.who
        if isinstance(fact, BidMade):
            self.bids[fact.seat] = fact.tricks
            return [Gathered("bids", "bids:", (f"{who(fact.seat)}: {fact.tricks}",))]
        if isinstance(fact, StreakBonus):
            kind = "exact bids" if fact.points > 0 else "misses"
            words = f"{who(fact.seat)}: five {kind} in a row, {fact.points:+d}"
            return [Line((words,), Tone.NOTE)]
        return []

    def score_rows(
        self, fact: DealScored, tricks_won: Mapping[int, int], public: Public
    ) -> list[ScoreRow]:
        return [
            ScoreRow("bid", tuple(str(self.bids.get(seat, "")) for seat in range(self.players))),
            tricks_row(tricks_won, self.players),
            score_row(fact.scores, signed=True),
        ]

    def seat_notes(self, public: Public, seat: int) -> list[str]:
        bids = public.get("bids") or []
        if seat < len(bids) and bids[seat] is not None:
            return [f"bid {bids[seat]}"]
        return []

    def table_chips(self, public: Public) -> list[str]:
        chips: list[str] = []
        if public.get("cards_each"):
            chips.append(f"{counted(public['cards_each'], 'card')} each")
        if public.get("turned_up"):
            chips.append(f"turned up {card_words(public['turned_up'])}")
        trump = public.get("trump")
        chips.append(trump_words(trump) if trump else "no trump")
        return chips
