"""Two players compared on the same boards: one setting against another, board by board.

Whether a change to a player helps is a smaller difference than either player's advantage over
their opponents, and the boards' luck swamps it when the two are measured apart: one board's
advantage can range over 50 points in 3-5-8. A run's cards depend only on its seed and board
numbers (``cardtable_tools.tournament``), so a run of the changed player against the same
opponents on the same seeds plays the very boards the first one did: the difference of the two
advantages on each board takes out the cards' share of the luck (a changed move still sends
the rest of the game elsewhere), and the mean of those differences, with its interval, says
whether the change helps.

Boards pair only when they were played alike: the same game, rotations, options, and the same
opponents at the same seats with the same settings; the two compared players are each the one
name the other side does not have.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cardtable_tools.tournament import boards_to_clear, confidence_interval
from cardtable_tools.tournament_pool import board_span

#: What the two sides' reports must agree on for their boards to pair.
SAME_ON_BOTH_SIDES = ("game", "players", "every_rotation", "options")


class PairError(ValueError):
    """Reports whose boards cannot be paired, with the reason."""


def board_values(reports: Iterable[Mapping[str, Any]], name: str) -> dict[tuple[int, int], float]:
    """``name``'s advantage on each board the reports played, keyed by seed and board number."""
    values: dict[tuple[int, int], float] = {}
    for report in reports:
        for number, value in zip(board_span(report), report[name]["board_advantages"], strict=True):
            key = (report["seed"], number)
            if key in values:
                raise PairError(
                    f"seed {key[0]}'s board {key[1]} is given twice on one side: it would count "
                    "twice"
                )
            values[key] = value
    return values


def _refuse_unlike_runs(
    base: Sequence[Mapping[str, Any]],
    base_name: str,
    trial: Sequence[Mapping[str, Any]],
    trial_name: str,
) -> None:
    """Refuse reports whose boards were not played alike but for the two compared players."""
    reports = [*base, *trial]
    if not base or not trial:
        raise PairError("each side needs at least one report")
    for side, name in ((base, base_name), (trial, trial_name)):
        for report in side:
            if name not in report.get("settings", {}):
                raise PairError(f"a report of seed {report.get('seed')} has no player named {name}")
    first = reports[0]
    for report in reports[1:]:
        differ = [key for key in SAME_ON_BOTH_SIDES if report.get(key) != first.get(key)]
        if differ:
            raise PairError(
                f"the reports differ in their {', '.join(differ)}: only boards played alike pair"
            )
    base_seats = [trial_name if seat == base_name else seat for seat in base[0]["seats"]]
    for report in trial:
        if report["seats"] != base_seats:
            raise PairError(
                f"seats {report['seats']} do not match {base[0]['seats']} with {trial_name} for "
                f"{base_name}: the two players must sit where the other did, among the same "
                "opponents"
            )
    opponents = {seat for seat in base_seats if seat != trial_name}
    for name in opponents:
        settings = {repr(report["settings"].get(name)) for report in reports}
        if len(settings) > 1:
            raise PairError(f"{name} played with different settings in the reports")


def pair_reports(
    base: Sequence[Mapping[str, Any]],
    base_name: str,
    trial: Sequence[Mapping[str, Any]],
    trial_name: str,
) -> dict[str, Any]:
    """``trial_name``'s advantage less ``base_name``'s on every board both sides played.

    The result holds ``boards`` (paired), ``unpaired`` (boards one side played alone, left
    out), ``base`` and ``trial`` (each side's mean advantage over the paired boards),
    ``difference`` with its 95% interval ``ci95`` and ``games_to_clear`` (``boards_to_clear``
    in games), and ``differences`` (board by board, in seed and board order).
    """
    _refuse_unlike_runs(base, base_name, trial, trial_name)
    base_values = board_values(base, base_name)
    trial_values = board_values(trial, trial_name)
    keys = sorted(base_values.keys() & trial_values.keys())
    if not keys:
        raise PairError("the two sides played no board in common: pair runs of the same seeds")
    differences = [trial_values[key] - base_values[key] for key in keys]
    low, high = confidence_interval(differences)
    per_board = base[0]["games"] // max(base[0]["boards"], 1)
    to_clear = boards_to_clear(differences)
    return {
        "game": base[0]["game"],
        "base_name": base_name,
        "trial_name": trial_name,
        "boards": len(keys),
        "unpaired": len(base_values.keys() ^ trial_values.keys()),
        "seeds": sorted({seed for seed, _ in keys}),
        "base": round(statistics.fmean(base_values[key] for key in keys), 3),
        "trial": round(statistics.fmean(trial_values[key] for key in keys), 3),
        "difference": round(statistics.fmean(differences), 3),
        "ci95": [round(low, 3), round(high, 3)],
        "games_to_clear": None if to_clear is None else to_clear * per_board,
        "differences": [round(value, 3) for value in differences],
    }
