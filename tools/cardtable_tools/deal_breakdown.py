"""Where a strategy's advantage comes from: a tournament's deals, grouped by cards each.

A tournament's advantage per game says who is stronger, not where. Two strategies level on
short Whist deals may part on the long ones, where most of a game's points are; a strategy
that bids lower than its opponent and takes more tricks than it bid more often loses in its
card play, not its bidding. ``cardtable tournament --by-deal`` reads every game's facts (the
engine's own account of the deal: cards each, bids, tricks won, deal scores) and reports, for
each strategy and each deal size, the deals' mean score and advantage, the tricks a seat took
and, where the game bids tricks (Whist), the mean bid and how often it was exact or exceeded.

A deal's advantage is the one a game's is, taken deal by deal: the mean deal score of the
strategy's seats minus the other seats', oriented so that higher is better. Scores add up to
totals, so a strategy's deal advantages, times the deals of each size a game has, add up to
its advantage per game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cardtable.engine.facts import BidMade, DealScored, DealStarted, Fact, TrickWon

#: A deal's scores by seat -> each strategy's advantage in it (the tournament's own measure).
DealAdvantages = Callable[[Sequence[int]], Mapping[str, float]]


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


class DealTally:
    """Reads one game's facts as they happen and keeps a line per seat for each deal."""

    def __init__(self, seating: Sequence[str], advantages: DealAdvantages) -> None:
        self.seating = tuple(seating)
        self.advantages = advantages
        self.lines: list[DealLine] = []
        self._cards_each = 0
        self._bids: dict[int, int] = {}
        self._tricks = [0] * len(seating)

    def read(self, facts: Iterable[Fact]) -> None:
        for fact in facts:
            if isinstance(fact, DealStarted):
                self._cards_each = fact.cards_each
                self._bids = {}
                self._tricks = [0] * len(self.seating)
            elif isinstance(fact, BidMade):
                self._bids[fact.seat] = fact.tricks
            elif isinstance(fact, TrickWon):
                self._tricks[fact.seat] += 1
            elif isinstance(fact, DealScored):
                self._close(fact.scores)

    def _close(self, scores: Sequence[int]) -> None:
        advantages = self.advantages(scores)
        for seat, strategy in enumerate(self.seating):
            self.lines.append(
                DealLine(
                    strategy,
                    self._cards_each,
                    scores[seat],
                    advantages[strategy],
                    self._tricks[seat],
                    self._bids.get(seat),
                )
            )


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


def breakdown(
    lines: Iterable[DealLine], seats_held: Mapping[str, int]
) -> dict[str, list[dict[str, Any]]]:
    """Each strategy's deals by size, smallest first: ``deals`` (deals it played: its lines
    over the ``seats_held`` it holds in every game), per seat ``mean_score``, ``tricks`` and,
    where bids were made, ``bid``, ``exact_rate`` and ``over_rate``; and its ``advantage``
    in such a deal.

    >>> report = breakdown([DealLine("a", 2, 7, 1.5, 2, 2), DealLine("a", 2, -1, 1.5, 0, 1),
    ...                     DealLine("b", 2, 0, -1.5, 0, None)], {"a": 2, "b": 1})
    >>> report["a"]
    [{'cards_each': 2, 'deals': 1, 'mean_score': 3.0, 'advantage': 1.5, 'tricks': 1.0, 'bid': 1.5, 'exact_rate': 0.5, 'over_rate': 0.0}]
    >>> report["b"]
    [{'cards_each': 2, 'deals': 1, 'mean_score': 0.0, 'advantage': -1.5, 'tricks': 0.0}]
    """  # noqa: E501
    sums: dict[str, dict[int, _Sums]] = {name: {} for name in seats_held}
    for line in lines:
        sums[line.strategy].setdefault(line.cards_each, _Sums()).add(line)
    report: dict[str, list[dict[str, Any]]] = {}
    for name, by_size in sums.items():
        rows = []
        for cards_each, entry in sorted(by_size.items()):
            row: dict[str, Any] = {
                "cards_each": cards_each,
                "deals": entry.lines // seats_held[name],
                "mean_score": round(entry.score / entry.lines, 3),
                "advantage": round(entry.advantage / entry.lines, 3),
                "tricks": round(entry.tricks / entry.lines, 3),
            }
            if entry.bids:
                row["bid"] = round(entry.bid / entry.bids, 3)
                row["exact_rate"] = round(entry.exact / entry.bids, 4)
                row["over_rate"] = round(entry.over / entry.bids, 4)
            rows.append(row)
        report[name] = rows
    return report
