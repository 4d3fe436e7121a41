"""The tournament's strength ladder as a picture: each strategy's advantage per game with its
95% interval, strongest at the top, and its win rate beside it.

Drawn from the JSON report alone (``cardtable tournament --json``), so an old report can be
drawn again, with matplotlib's file-only backend as the bench's chart is (bench/chart.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after use(): the backend must be chosen first


def draw_ladder(report: dict[str, Any], path: Path) -> Path:
    """Two panels sharing the strategies' axis: advantage per game (a point and its interval,
    zero marked: an interval clear of it is a real difference) and win rate."""
    ladder = list(report["ladder"])
    rows = list(range(len(ladder)))[::-1]  # the strongest at the top
    advantages = [report[name]["advantage"] for name in ladder]
    lows = [report[name]["advantage"] - report[name]["ci95"][0] for name in ladder]
    highs = [report[name]["ci95"][1] - report[name]["advantage"] for name in ladder]
    wins = [100 * report[name]["win_rate"] for name in ladder]
    figure, (strength, winning) = plt.subplots(
        1, 2, figsize=(10, 1.2 + 0.6 * len(ladder)), sharey=True, layout="constrained"
    )
    strength.errorbar(advantages, rows, xerr=[lows, highs], fmt="o", capsize=4)
    strength.axvline(0, color="tab:gray", linestyle="--", linewidth=1)
    strength.set_yticks(rows, ladder)
    strength.set_xlabel("advantage per game (own score minus the others'), 95% interval")
    strength.set_title("strength")
    drawn = winning.barh(rows, wins, color="tab:blue")
    winning.bar_label(drawn, fmt="%.1f%%", fontsize=8)
    winning.set_xlim(0, 100)
    winning.set_xlabel("games won, %")
    winning.set_title("win rate")
    figure.suptitle(
        f"cardtable tournament: {report['game']}, {report['games']} games in "
        f"{report['boards']} boards"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
