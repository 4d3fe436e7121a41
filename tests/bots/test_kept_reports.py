"""The tournament reports kept in ``docs/benchmarks/tournaments`` still pool.

The figures of long match-ups are pooled over runs made in different sessions, so the reports
are kept: a change to the report's format that left them unreadable by
``cardtable tournament-pool`` would lose what they measured.
"""

from __future__ import annotations

import json
import re
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from cardtable_tools.tournament_pool import pool_reports

KEPT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "tournaments"
#: A kept report's name: its match-up, then the seed it was run with and, for a run that
#: played on from a later board of the seed (``--first-board``), that board.
NAME = re.compile(r"(?P<match_up>[a-z0-9-]+?)-seed(?P<seed>\d+)(-from(?P<first>\d+))?\.json")


def kept_reports() -> list[Path]:
    return sorted(KEPT.glob("*.json"))


def match_up(path: Path) -> str:
    found = NAME.fullmatch(path.name)
    assert found, f"{path.name} is not named <match-up>-seed<N>[-from<B>].json"
    return found["match_up"]


def test_reports_are_kept() -> None:
    assert kept_reports(), f"no reports in {KEPT}"


@pytest.mark.parametrize("path", kept_reports(), ids=lambda path: path.name)
def test_a_kept_report_is_named_for_its_seed(path: Path) -> None:
    report: dict[str, Any] = json.loads(path.read_text())
    found = NAME.fullmatch(path.name)
    assert found and int(found["seed"]) == report["seed"]
    assert int(found["first"] or 0) == report.get("first_board", 0)
    assert match_up(path).split("-")[-1] == report["game"]


@pytest.mark.parametrize(
    "group",
    [list(paths) for _, paths in groupby(kept_reports(), key=match_up)],
    ids=lambda paths: match_up(paths[0]),
)
def test_the_kept_reports_of_a_match_up_pool(group: list[Path]) -> None:
    reports = [json.loads(path.read_text()) for path in group]
    pooled = pool_reports(reports, [path.name for path in group])
    assert pooled["seeds"] == [report["seed"] for report in reports]
    assert pooled["games"] == sum(report["games"] for report in reports)
