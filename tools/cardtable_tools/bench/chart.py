"""The benchmark's picture: throughput and latency against the number of tables, and the
move latency at the paced rates where the latency targets are judged.

Drawn from the JSON report alone (so an old report can be drawn again) with matplotlib's
file-only backend: no screen is needed, which is how benchmarks run on servers and in CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after use(): the backend must be chosen first
from matplotlib.axes import Axes

#: Which latency target each paced rate is judged by, as a share of the throughput target.
_TARGET_AT_SHARE = {1.0: "move_latency_p99_ms", 0.5: "move_latency_p99_ms_at_half_rate"}


@dataclass(frozen=True)
class PacedBar:
    """One paced load's move latency beside the move floor's and the target it is held to."""

    label: str
    p50_ms: float
    p99_ms: float
    floor_p99_ms: float | None
    target_ms: float | None


def paced_bars(report: dict[str, Any]) -> list[PacedBar]:
    """The paced loads, fastest offered rate first; empty for a report without them."""
    floor_runs = (report.get("floor") or {}).get("runs", [])
    floor_at = {run["target_moves_per_s"]: run for run in floor_runs}
    targets = report["targets"]
    bars = []
    for run in sorted(
        report.get("paced", []), key=lambda run: run["target_moves_per_s"], reverse=True
    ):
        rate = run["target_moves_per_s"]
        target_key = _TARGET_AT_SHARE.get(rate / targets["moves_per_s"])
        floor = floor_at.get(rate)
        bars.append(
            PacedBar(
                label=f"{rate:,.0f}/s offered",
                p50_ms=run["move_latency_p50_ms"],
                p99_ms=run["move_latency_p99_ms"],
                floor_p99_ms=None if floor is None else floor["move_latency_p99_ms"],
                target_ms=targets.get(target_key) if target_key else None,
            )
        )
    return bars


def draw_chart(report: dict[str, Any], path: Path) -> Path:
    """Two panels sharing the tables axis: moves/s (with the target), and latencies in ms;
    a third with the paced loads' move latency against their targets, when they ran."""
    runs = sorted(report["runs"], key=lambda run: run["tables"])
    tables = [run["tables"] for run in runs]
    bars = paced_bars(report)
    figure, panels = plt.subplots(
        1, 3 if bars else 2, figsize=(16 if bars else 11, 4.2), layout="constrained"
    )
    throughput, latency = panels[0], panels[1]

    throughput.plot(tables, [run["moves_per_s"] for run in runs], marker="o", label="moves/s")
    target = report["targets"]["moves_per_s"]
    throughput.axhline(target, color="tab:red", linestyle="--", label=f"target {target:,.0f}")
    throughput.set_xlabel("tables played at once")
    throughput.set_ylabel("moves per second")
    throughput.set_ylim(bottom=0)
    throughput.set_title("throughput")
    throughput.legend()

    for key, label in (
        ("move_latency_p50_ms", "move p50"),
        ("move_latency_p99_ms", "move p99"),
        ("projection_lag_p50_ms", "projection lag p50"),
        ("projection_lag_p99_ms", "projection lag p99"),
    ):
        values = [run[key] for run in runs]
        if any(value is not None for value in values):
            latency.plot(tables, values, marker="o", label=label)
    latency.set_xlabel("tables played at once")
    latency.set_ylabel("milliseconds")
    latency.set_yscale("log")
    latency.set_title("latency")
    latency.legend()
    if bars:
        _draw_paced(panels[2], bars)

    machine = report.get("machine", {})
    figure.suptitle(
        f"cardtable bench: {report.get('game', '')}, {machine.get('cpus', '?')} CPUs, "
        f"{report.get('seconds_per_run', '?')} s per load"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _draw_paced(axes: Axes, bars: list[PacedBar]) -> None:
    """Move p50 and p99 per paced rate, the floor's p99 beside them, each target as a line."""
    width = 0.27
    places = range(len(bars))
    series = (
        ("move p50", [bar.p50_ms for bar in bars], -width, "tab:blue"),
        ("move p99", [bar.p99_ms for bar in bars], 0.0, "tab:orange"),
        ("the floor's p99", [bar.floor_p99_ms or 0.0 for bar in bars], width, "tab:gray"),
    )
    for label, values, offset, color in series:
        drawn = axes.bar(
            [place + offset for place in places], values, width, label=label, color=color
        )
        axes.bar_label(drawn, fmt="%.1f", fontsize=8)
    for place, bar in zip(places, bars, strict=True):
        if bar.target_ms is not None:
            axes.hlines(
                bar.target_ms,
                place - 1.6 * width,
                place + 1.6 * width,
                colors="tab:red",
                linestyles="--",
                label="target p99" if place == 0 else "_nolegend_",
            )
    axes.set_xticks(list(places), [bar.label for bar in bars])
    axes.set_ylabel("milliseconds")
    axes.set_ylim(bottom=0)
    axes.set_title("move latency where the targets are judged")
    axes.legend()
