"""How a Belote replay reads: the bidding, the turned card, belote, capot and the contract."""

from __future__ import annotations

from collections.abc import Mapping

from cardtable.engine.cards import SUIT_SYMBOL_OF, format_card
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.games.belote.phases import Phase
from cardtable.engine.games.belote.rules import (
    BeloteScored,
    CapotMade,
    ContractSettled,
    DealThrownIn,
    TrumpBidMade,
    TurnedCardTaken,
)
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
    score_row,
    tricks_row,
    trump_words,
)


class BeloteNarration(GameNarration):
    """Belote: each round of bids on one line, the takers' result, play to the right."""

    trick_points = True

    def __init__(self, narrator: Narrator, players: int) -> None:
        super().__init__(narrator, players)
        self.thrown_in = False  # this deal's: its score row then shows no scores

    def start_deal(self, fact: DealStarted, public: Public) -> list[tuple[Part, ...]]:
        self.thrown_in = False
        turned = public.get("turned_card")
        return [("turned up ", CardMark(turned))] if turned else []

    def tell(self, fact: Fact, public: Public) -> list[Told]:
        narrator = self.narrator
        who = narrator.who
        if isinstance(fact, TrumpBidMade):
            label = f"bidding, round {fact.bid_round}:"
            item = (f"{who(fact.seat)} ", *_bid_parts(fact.bid))
            return [Gathered(("trump bids", fact.bid_round), label, item)]
        if isinstance(fact, TurnedCardTaken):
            picks = narrator.does(fact.seat, "pick", "picks")
            return [Line((picks, " up ", CardMark(format_card(fact.card))))]
        if isinstance(fact, DealThrownIn):
            self.thrown_in = True
            return [Line(("everybody passed twice: the cards are thrown in",), Tone.NOTE)]
        if isinstance(fact, BeloteScored):
            words = (
                f"belote: {who(fact.seat)} held the king and queen of trump, "
                f"+{fact.points} for {narrator.team_of(fact.seat)}"
            )
            return [Line((words,))]
        if isinstance(fact, CapotMade):
            by = f"{who(fact.seat)} alone" if fact.seat is not None else narrator.team(fact.seats)
            return [Line((f"capot: {by} won every trick, +{fact.bonus}",), Tone.STRONG)]
        if isinstance(fact, ContractSettled):
            team = narrator.team_of(fact.taker)
            if fact.made:
                outcome = f"made it, {fact.taker_points} to {fact.defender_points}"
            else:
                outcome = (
                    f"went down, {fact.taker_points} to {fact.defender_points}: "
                    "the defenders score all 162"
                )
            return [Line((f"the takers ({team}) {outcome}",))]
        return []

    def score_rows(
        self, fact: DealScored, tricks_won: Mapping[int, int], public: Public
    ) -> list[ScoreRow]:
        if self.thrown_in:
            return [ScoreRow("score", ("-",) * self.players, Tone.QUIET)]
        return [tricks_row(tricks_won, self.players), score_row(fact.scores, signed=False)]

    def seat_notes(self, public: Public, seat: int) -> list[str]:
        bids = [entry for entry in public.get("bids") or [] if entry.get("seat") == seat]
        if seat == public.get("taker"):
            return ["taker"]
        if bids and public.get("phase") == Phase.BID:
            return [_bid_words(str(bids[-1]["bid"]))]
        return []

    def table_chips(self, public: Public) -> list[str]:
        chips: list[str] = []
        if public.get("turned_card") and public.get("phase") == Phase.BID:
            chips.append(f"turned up {card_words(public['turned_card'])}")
        if public.get("bid_round"):
            chips.append(f"bidding, round {public['bid_round']}")
        trump = public.get("trump")
        if trump:
            chips.append(trump_words(trump))
        return chips


def _bid_parts(bid: str) -> tuple[Part, ...]:
    """A bid for people: ``pass``, ``take``, ``name ♥ hearts``."""
    verb, _, suit = bid.partition(" ")
    if suit in SUIT_SYMBOL_OF:
        return (f"{verb} ", SuitMark(suit))
    return (bid,)


def _bid_words(bid: str) -> str:
    """A bid in short: ``pass``, ``take``, ``name ♥``."""
    verb, _, suit = bid.partition(" ")
    return f"{verb} {SUIT_SYMBOL_OF[suit]}" if suit in SUIT_SYMBOL_OF else bid
