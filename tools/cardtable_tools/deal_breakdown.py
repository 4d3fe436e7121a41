"""Where a strategy's advantage comes from: a tournament's deals, grouped by cards each and,
in Belote and 3-5-8, by a seat's part in the deal.

A tournament's advantage per game says who is stronger, not where. Two strategies level on
short Whist deals may part on the long ones, where most of a game's points are; a strategy
that bids lower than its opponent and takes more tricks than it bid more often loses in its
card play, not its bidding. ``cardtable tournament --by-deal`` reads every game's facts (the
engine's own account of the deal: cards each, bids, tricks won, deal scores) and reports, for
each strategy and each deal size, the deals' mean score and advantage, the tricks a seat took
and, where the game bids tricks (Whist), the mean bid and how often it was exact or exceeded.
Belote deals all have eight cards; there a deal is grouped by its side's part in it: it took
the trump, defended, or the cards were thrown in, with how often a side that took made its
contract. A take is a side's decision, so both seats of a side have the same part in a deal.
3-5-8 deals all have sixteen cards; there a seat's deal is grouped by its part: declarer of a
trump contract, of no trump or of minimum tricks, third player or dealer. A strategy's
``deals`` in a part are its seats' deals in it over the seats it holds, so a strategy holding
two of three seats has fractions of deals in each part.

A deal's advantage is the one a game's is, taken deal by deal: the mean deal score of the
strategy's seats minus the other seats', oriented so that higher is better. Scores add up to
totals, so a strategy's deal advantages, times the deals of each size a game has, add up to
its advantage per game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cardtable.engine.facts import BidMade, DealScored, DealStarted, Fact, TrickWon, TrumpChosen
from cardtable.engine.games.belote.rules import TEAMS as BELOTE_TEAMS
from cardtable.engine.games.belote.rules import ContractSettled, DealThrownIn
from cardtable.engine.games.three_five_eight.rules import ContractChosen

#: A deal's scores by seat -> each strategy's advantage in it (the tournament's own measure).
DealAdvantages = Callable[[Sequence[int]], Mapping[str, float]]

#: A Belote side's part in a deal.
TOOK, DEFENDED, THROWN_IN = "took", "defended", "thrown in"
#: A 3-5-8 seat's part in a deal: the declarer by its contract's kind, the third player, the dealer.
DECLARED_TRUMP, DECLARED_NT, DECLARED_MT = "declared trump", "declared NT", "declared MT"
THIRD, DEALER = "third", "dealer"
#: Every part, in the order the report lists them.
ROLES = (TOOK, DEFENDED, THROWN_IN, DECLARED_TRUMP, DECLARED_NT, DECLARED_MT, THIRD, DEALER)


class DealLine(NamedTuple):
    """One seat's deal: who played it, how big it was, and how it went."""

    strategy: str
    cards_each: int
    score: int
    #: The strategy's advantage in this deal (the same for each of its seats).
    advantage: float
    tricks: int
    #: Tricks bid, in a game that bids them.
    bid: int | None
    #: The seat's part in the deal (:data:`ROLES`), in Belote and 3-5-8.
    role: str = ""
    #: Whether the side that took made its contract, for a side that took.
    made: bool | None = None


class DealTally:
    """Reads one game's facts as they happen and keeps a line per seat for each deal."""

    def __init__(self, seating: Sequence[str], advantages: DealAdvantages) -> None:
        self.seating = tuple(seating)
        self.advantages = advantages
        self.lines: list[DealLine] = []
        self._cards_each = 0
        self._bids: dict[int, int] = {}
        self._tricks = [0] * len(seating)
        self._taker: int | None = None
        self._made: bool | None = None
        self._thrown_in = False
        self._dealer = 0
        self._declarer: tuple[int, str] | None = None

    def read(self, facts: Iterable[Fact]) -> None:
        for fact in facts:
            if isinstance(fact, DealStarted):
                self._cards_each = fact.cards_each
                self._dealer = fact.dealer
                self._declarer = None
                self._bids = {}
                self._tricks = [0] * len(self.seating)
                self._taker, self._made, self._thrown_in = None, None, False
            elif isinstance(fact, ContractChosen):
                self._declarer = (fact.seat, fact.contract)
            elif isinstance(fact, TrumpChosen):
                self._taker = fact.seat
            elif isinstance(fact, ContractSettled):
                self._made = fact.made
            elif isinstance(fact, DealThrownIn):
                self._thrown_in = True
            elif isinstance(fact, BidMade):
                self._bids[fact.seat] = fact.tricks
            elif isinstance(fact, TrickWon):
                self._tricks[fact.seat] += 1
            elif isinstance(fact, DealScored):
                self._close(fact.scores)

    def _close(self, scores: Sequence[int]) -> None:
        advantages = self.advantages(scores)
        for seat, strategy in enumerate(self.seating):
            role = self._role(seat)
            self.lines.append(
                DealLine(
                    strategy,
                    self._cards_each,
                    scores[seat],
                    advantages[strategy],
                    self._tricks[seat],
                    self._bids.get(seat),
                    role,
                    self._made if role == TOOK else None,
                )
            )

    def _role(self, seat: int) -> str:
        """The seat's part in the deal: in 3-5-8 its own, in Belote its side's (the engine's
        ``TEAMS``)."""
        if self._declarer is not None:
            declarer, contract = self._declarer
            if seat == declarer:
                return {"NT": DECLARED_NT, "MT": DECLARED_MT}.get(contract, DECLARED_TRUMP)
            return DEALER if seat == self._dealer else THIRD
        if self._thrown_in:
            return THROWN_IN
        if self._taker is None:
            return ""
        taking_side = next(side for side in BELOTE_TEAMS if self._taker in side)
        return TOOK if seat in taking_side else DEFENDED


@dataclass
class _Sums:
    """Running sums of one strategy's lines of one deal size."""

    lines: int = 0
    score: float = 0.0
    advantage: float = 0.0
    tricks: float = 0.0
    bids: int = 0
    bid: float = 0.0
    exact: int = 0
    over: int = 0
    contracts: int = 0
    made: int = 0

    def add(self, line: DealLine) -> None:
        self.lines += 1
        self.score += line.score
        self.advantage += line.advantage
        self.tricks += line.tricks
        if line.bid is not None:
            self.bids += 1
            self.bid += line.bid
            self.exact += line.tricks == line.bid
            self.over += line.tricks > line.bid
        if line.made is not None:
            self.contracts += 1
            self.made += line.made


def deals_held(lines: int, seats: int) -> int | float:
    """A strategy's deals of a kind: its seats' deals over the seats it holds, whole where
    they divide (each of its seats played each deal) and else to two places.

    >>> deals_held(6, 2), deals_held(7, 2)
    (3, 3.5)
    """
    if lines % seats == 0:
        return lines // seats
    return round(lines / seats, 2)


def row_order(key: tuple[int, str]) -> tuple[int, int]:
    """Rows by size, then by part in the order of :data:`ROLES`."""
    cards_each, role = key
    return cards_each, ROLES.index(role) if role in ROLES else -1


def breakdown(
    lines: Iterable[DealLine], seats_held: Mapping[str, int]
) -> dict[str, list[dict[str, Any]]]:
    """Each strategy's deals by size, smallest first, and by its side's part where a side
    takes (``role``): ``deals`` (deals it played: its lines over the ``seats_held`` it holds
    in every game), per seat ``mean_score``, ``tricks`` and, where bids were made, ``bid``,
    ``exact_rate`` and ``over_rate``; where its side took, ``made_rate``; and its
    ``advantage`` in such a deal.

    >>> report = breakdown([DealLine("a", 2, 7, 1.5, 2, 2), DealLine("a", 2, -1, 1.5, 0, 1),
    ...                     DealLine("b", 2, 0, -1.5, 0, None)], {"a": 2, "b": 1})
    >>> report["a"]
    [{'cards_each': 2, 'deals': 1, 'mean_score': 3.0, 'advantage': 1.5, 'tricks': 1.0, 'bid': 1.5, 'exact_rate': 0.5, 'over_rate': 0.0}]
    >>> report["b"]
    [{'cards_each': 2, 'deals': 1, 'mean_score': 0.0, 'advantage': -1.5, 'tricks': 0.0}]
    >>> breakdown([DealLine("a", 8, 81, 40.0, 3, None, TOOK, True)], {"a": 1})["a"]
    [{'cards_each': 8, 'role': 'took', 'deals': 1, 'mean_score': 81.0, 'advantage': 40.0, 'tricks': 3.0, 'made_rate': 1.0}]
    """  # noqa: E501
    sums: dict[str, dict[tuple[int, str], _Sums]] = {name: {} for name in seats_held}
    for line in lines:
        sums[line.strategy].setdefault((line.cards_each, line.role), _Sums()).add(line)
    report: dict[str, list[dict[str, Any]]] = {}
    for name, by_kind in sums.items():
        rows = []
        for (cards_each, role), entry in sorted(
            by_kind.items(), key=lambda item: row_order(item[0])
        ):
            row: dict[str, Any] = {"cards_each": cards_each}
            if role:
                row["role"] = role
            row.update(
                {
                    "deals": deals_held(entry.lines, seats_held[name]),
                    "mean_score": round(entry.score / entry.lines, 3),
                    "advantage": round(entry.advantage / entry.lines, 3),
                    "tricks": round(entry.tricks / entry.lines, 3),
                }
            )
            if entry.bids:
                row["bid"] = round(entry.bid / entry.bids, 3)
                row["exact_rate"] = round(entry.exact / entry.bids, 4)
                row["over_rate"] = round(entry.over / entry.bids, 4)
            if entry.contracts:
                row["made_rate"] = round(entry.made / entry.contracts, 4)
            rows.append(row)
        report[name] = rows
    return report
