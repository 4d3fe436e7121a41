"""Tournament runs of one match-up pooled into one report: more boards, a narrower interval.

A difference between two strong players is often smaller than one run can show: the interval
of 160 Whist games spans about five points. Boards are independent draws of cards, and a run's
cards depend only on its seed (``cardtable_tools.tournament``), so runs of the same match-up
with different seeds are one larger sample: their boards, taken together, give the pooled
advantage and its interval exactly as one run of that many boards would. A pool is most often
looked at after each run, to see whether it has cleared zero yet, which a fixed-size interval
does not allow for: the pooled report gives the interval that does, ``ci95_anytime``
(:mod:`cardtable_tools.anytime`), too.

Runs are pooled only when they played the same thing: the same game, seats, rotations, game
options and every seated name's settings (its strategy and options, a level's own included, as
the report recorded them). Runs of one seed pool only where their boards do not overlap (a run
stopped early and the one that played on from its next board, ``--first-board``): a board
given twice would count twice, so that is refused. A report made before tournaments recorded
their seed and settings says neither, so it cannot be checked: refused too.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from cardtable_tools.anytime import anytime_interval
from cardtable_tools.deal_breakdown import row_order
from cardtable_tools.tournament import (
    boards_to_clear,
    confidence_interval,
    strength_ladder,
)

#: What two runs must agree on to be pooled: what was played, not how long it took.
MATCH_UP_KEYS = ("game", "players", "seats", "every_rotation", "options", "settings")
#: What a report must hold to be pooled.
REQUIRED_KEYS = (*MATCH_UP_KEYS, "seed", "games", "boards")
#: A deal size's figures that are means over its deals, and the places each is rounded to.
DEAL_MEANS = {
    "mean_score": 3,
    "advantage": 3,
    "tricks": 3,
    "bid": 3,
    "exact_rate": 4,
    "over_rate": 4,
    "made_rate": 4,
}


class PoolError(ValueError):
    """Reports that cannot be pooled, with the reason."""


def pool_reports(reports: Sequence[Mapping[str, Any]], names: Sequence[str] = ()) -> dict[str, Any]:
    """One report for the boards of ``reports`` together, in the order given; ``names`` (the
    reports' file names, say) name them in a refusal. The pooled report has a tournament
    report's keys but ``workers``, with ``seeds`` and ``first_boards`` (each run's) in place of
    ``seed`` and ``first_board``, and ``seconds`` the runs' total; ``by_deal`` when every run
    has it."""
    if not reports:
        raise PoolError("no reports to pool")
    labels = list(names) or [f"report {index + 1}" for index in range(len(reports))]
    for label, report in zip(labels, reports, strict=True):
        missing = [key for key in REQUIRED_KEYS if key not in report]
        if missing:
            raise PoolError(
                f"{label} does not say its {', '.join(missing)}: it was made before "
                "tournaments recorded what they played, so run it again to pool it"
            )
    first = reports[0]
    for label, report in zip(labels[1:], reports[1:], strict=True):
        differ = [key for key in MATCH_UP_KEYS if report[key] != first[key]]
        if differ:
            raise PoolError(
                f"{label} played another match-up than {labels[0]} (its {', '.join(differ)} "
                "differ): only runs of the same players on the same game pool"
            )
    seeds = [report["seed"] for report in reports]
    first_boards = [report.get("first_board", 0) for report in reports]
    _refuse_boards_given_twice(reports)
    games = sum(report["games"] for report in reports)
    boards = sum(report["boards"] for report in reports)
    pooled: dict[str, Any] = {key: first[key] for key in MATCH_UP_KEYS}
    pooled.update(
        seeds=seeds,
        first_boards=first_boards,
        runs=len(reports),
        games=games,
        boards=boards,
        seconds=round(sum(report.get("seconds", 0.0) for report in reports), 2),
    )
    per_board = games // boards
    weights = [report["games"] for report in reports]
    for name in dict.fromkeys(first["seats"]):
        pooled[name] = _pooled_strategy([report[name] for report in reports], weights, per_board)
    pooled["ladder"] = strength_ladder(pooled)
    if all("by_deal" in report for report in reports):
        pooled["by_deal"] = {
            name: pool_deal_rows([report["by_deal"][name] for report in reports])
            for name in first["by_deal"]
        }
    return pooled


def board_span(report: Mapping[str, Any]) -> range:
    """The numbers of the seed's boards a report played (a report made before runs could start
    at a later board played from board 0)."""
    first = report.get("first_board", 0)
    return range(first, first + report["boards"])


def _refuse_boards_given_twice(reports: Sequence[Mapping[str, Any]]) -> None:
    """Refuse reports of which two played a board of the same seed."""
    seen: dict[int, set[int]] = {}
    for report in reports:
        played = seen.setdefault(report["seed"], set())
        twice = played.intersection(board_span(report))
        if twice:
            raise PoolError(
                f"seed {report['seed']}'s boards {min(twice)}-{max(twice)} are given more than "
                "once: runs of one seed play the same boards, which would count twice"
            )
        played.update(board_span(report))


def _pooled_strategy(
    entries: Sequence[Mapping[str, Any]], games: Sequence[int], per_board: int
) -> dict[str, Any]:
    """One strategy's figures over every run's boards; means over games weighed by ``games``,
    each run's."""
    boards = [value for entry in entries for value in entry["board_advantages"]]
    low, high = confidence_interval(boards)
    anytime_low, anytime_high = anytime_interval(boards)
    to_clear = boards_to_clear(boards)
    return {
        "mean_score": round(statistics.fmean([entry["mean_score"] for entry in entries], games), 3),
        "win_rate": round(statistics.fmean([entry["win_rate"] for entry in entries], games), 4),
        "advantage": round(statistics.fmean(boards), 3),
        "ci95": [round(low, 3), round(high, 3)],
        # JSON has no infinity: one board alone has no interval
        "ci95_anytime": (
            None if math.isinf(anytime_low) else [round(anytime_low, 3), round(anytime_high, 3)]
        ),
        "games_to_clear": None if to_clear is None else to_clear * per_board,
        "board_advantages": boards,
    }


def pool_deal_rows(runs: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One strategy's deals by size (and side's part) over several runs
    (``deal_breakdown.breakdown``'s rows): each mean weighed by the deals it is over. In
    Whist every seat bids every deal, and in Belote a side that took plays each such deal
    for its contract, so the rates are over the same deals as the rest.

    >>> pool_deal_rows([[{"cards_each": 1, "deals": 1, "advantage": 3.0}],
    ...                 [{"cards_each": 1, "deals": 3, "advantage": -1.0}]])
    [{'cards_each': 1, 'deals': 4, 'advantage': 0.0}]
    >>> took = {"cards_each": 8, "role": "took", "deals": 1, "advantage": 1.0, "made_rate": 1.0}
    >>> defended = {"cards_each": 8, "role": "defended", "deals": 1, "advantage": 2.0}
    >>> pool_deal_rows([[defended, took], [{**took, "deals": 3, "made_rate": 0.0}]])
    [{'cards_each': 8, 'role': 'took', 'deals': 4, 'advantage': 1.0, 'made_rate': 0.25}, {'cards_each': 8, 'role': 'defended', 'deals': 1, 'advantage': 2.0}]
    """  # noqa: E501
    by_kind: dict[tuple[int, str], list[Mapping[str, Any]]] = {}
    for rows in runs:
        for row in rows:
            by_kind.setdefault((row["cards_each"], row.get("role", "")), []).append(row)
    pooled = []
    for (cards_each, role), rows in sorted(by_kind.items(), key=lambda item: row_order(item[0])):
        deals = [row["deals"] for row in rows]
        entry: dict[str, Any] = {"cards_each": cards_each}
        if role:
            entry["role"] = role
        entry["deals"] = sum(deals)
        for key, places in DEAL_MEANS.items():
            if all(key in row for row in rows):
                entry[key] = round(statistics.fmean([row[key] for row in rows], deals), places)
        pooled.append(entry)
    return pooled
