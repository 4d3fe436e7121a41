"""How a 3-5-8 replay reads: the contract, the exchanges, the talon, each seat's target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cardtable.engine.actions import DISCARD, GIVE_CARD
from cardtable.engine.cards import SUIT_SYMBOL_OF, card_texts, format_card
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACTS,
    MINIMUM_TRICKS,
    NO_TRUMP,
    CardsDiscarded,
    CardsExchanged,
    ContractChosen,
    ExchangesOwed,
    ExchangesSkipped,
    TalonTaken,
)
from cardtable.engine.narration import (
    CardMark,
    CardsMark,
    GameNarration,
    Line,
    Narrator,
    Part,
    Public,
    Quiet,
    ScoreRow,
    SuitMark,
    Told,
    Tone,
    counted,
    score_row,
    tricks_row,
    trump_words,
)

_CONTRACT_WORDS = {NO_TRUMP: "no trump", MINIMUM_TRICKS: "minimum tricks"}


class ThreeFiveEightNarration(GameNarration):
    """3-5-8: who must take how many tricks (or at most how many, in minimum tricks)."""

    def __init__(self, narrator: Narrator, players: int) -> None:
        super().__init__(narrator, players)
        # This deal's, for the row above the scores: the contract and each seat's target.
        self.contract = ""
        self.targets: list[int] = []

    def start_deal(self, fact: DealStarted, public: Public) -> list[tuple[Part, ...]]:
        self.contract = ""
        self.targets = []
        who = self.narrator.who
        declarer, third = public.get("declarer"), public.get("third")
        targets = public.get("targets") or []
        if not (isinstance(declarer, int) and isinstance(third, int) and targets):
            return []
        return [
            (f"declarer {who(declarer)} ({targets[declarer]})",),
            (f"third {who(third)} ({targets[third]})",),
            (f"dealer {who(fact.dealer)} ({targets[fact.dealer]})",),
        ]

    def tell(self, fact: Fact, public: Public) -> list[Told]:
        narrator = self.narrator
        who = narrator.who
        if isinstance(fact, ContractChosen):
            return self._contract(fact, public)
        if isinstance(fact, ExchangesOwed):
            words = (
                f"exchange: {who(fact.seat)} scored above 0 last deal and "
                f"{who(fact.to_seat)} below: {counted(fact.number, 'card')} to exchange"
            )
            return [Line((words,))]
        if isinstance(fact, CardsExchanged):
            back: tuple[Part, ...] = (
                (": it is the highest of its suit there, so it comes back",)
                if fact.given_card == fact.returned_card
                else (
                    " and ",
                    "get" if fact.seat == narrator.seat else "gets",
                    " back ",
                    CardMark(format_card(fact.returned_card)),
                )
            )
            gives = narrator.does(fact.seat, "give", "gives")
            given = CardMark(format_card(fact.given_card))
            return [Line((gives, " ", given, f" to {who(fact.to_seat)}", *back))]
        if isinstance(fact, ExchangesSkipped):
            holds = narrator.does(fact.seat, "hold", "holds")
            return [Line((holds, f" only trumps: {counted(fact.number, 'exchange')} skipped"))]
        if isinstance(fact, TalonTaken):
            takes = narrator.does(fact.seat, "take", "takes")
            return [Line((takes, " the talon: ", CardsMark(tuple(card_texts(fact.cards)))))]
        if isinstance(fact, CardsDiscarded):
            puts = narrator.does(fact.seat, "put", "puts")
            return [Line((puts, " away face down: ", CardsMark(tuple(card_texts(fact.cards)))))]
        return []

    def _contract(self, fact: ContractChosen, public: Public) -> list[Told]:
        self.contract = fact.contract
        name: tuple[Part, ...] = (
            (SuitMark(fact.contract), " as trump")
            if fact.contract in SUIT_SYMBOL_OF
            else (_CONTRACT_WORDS.get(fact.contract, fact.contract),)
        )
        used = public.get("used_contracts") or []
        left = [c for c in CONTRACTS if fact.seat < len(used) and c not in used[fact.seat]]
        told: list[Told] = [
            Line(
                (
                    self.narrator.does(fact.seat, "choose", "chooses"),
                    " ",
                    *name,
                    Quiet(f" (contracts left: {' '.join(left) or 'none'})"),
                )
            )
        ]
        if fact.contract == MINIMUM_TRICKS:
            targets = public.get("targets") or []
            limits = ", ".join(f"{self.narrator.who(s)} {t}" for s, t in enumerate(targets))
            told.append(Line((f"at most: {limits}",), Tone.NOTE))
        return told

    def hidden_action(
        self, seat: int, kind: str, facts: Sequence[Fact], public: Public
    ) -> list[Line]:
        who = self.narrator.who
        if kind == DISCARD:
            words = f"{who(seat)} takes the talon and puts four cards away face down"
            return [Line((words,), Tone.NOTE)]
        if kind == GIVE_CARD and not any(isinstance(fact, CardsExchanged) for fact in facts):
            exchanges = public.get("exchanges") or []
            debtor = exchanges[-1]["debtor"] if exchanges else None
            to = f" {who(debtor)}" if isinstance(debtor, int) else ""
            words = f"{who(seat)} gives{to} a card and gets one back (hidden)"
            return [Line((words,), Tone.NOTE)]
        return []

    def play_started(self, public: Public) -> None:
        self.targets = list(public.get("targets") or [])

    def score_rows(
        self, fact: DealScored, tricks_won: Mapping[int, int], public: Public
    ) -> list[ScoreRow]:
        targets = self.targets or list(public.get("targets") or [])
        label = "limit" if self.contract == MINIMUM_TRICKS else "target"
        return [
            ScoreRow(label, tuple(str(target) for target in targets)),
            tricks_row(tricks_won, self.players),
            score_row(fact.scores, signed=True),
        ]

    def seat_notes(self, public: Public, seat: int) -> list[str]:
        notes: list[str] = []
        targets = public.get("targets") or []
        if seat == public.get("declarer"):
            notes.append("declarer")
        if seat < len(targets):
            word = "at most" if public.get("contract") == MINIMUM_TRICKS else "target"
            notes.append(f"{word} {targets[seat]}")
        return notes

    def table_chips(self, public: Public) -> list[str]:
        chips: list[str] = []
        contract = public.get("contract")
        if contract:
            chips.append(f"contract: {_CONTRACT_WORDS.get(contract) or trump_words(contract)}")
        if public.get("talon_size"):
            chips.append(f"talon: {public['talon_size']} cards")
        return chips
