"""The benchmark's picture: throughput and latency against the number of tables.

Drawn from the JSON report alone (so an old report can be drawn again) with matplotlib's
file-only backend: no screen is needed, which is how benchmarks run on servers and in CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after use(): the backend must be chosen first


def draw_chart(report: dict[str, Any], path: Path) -> Path:
    """Two panels sharing the tables axis: moves/s (with the target), and latencies in ms."""
    runs = sorted(report["runs"], key=lambda run: run["tables"])
    tables = [run["tables"] for run in runs]
    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")

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

    machine = report.get("machine", {})
    figure.suptitle(
        f"cardtable bench: {report.get('game', '')}, {machine.get('cpus', '?')} CPUs, "
        f"{report.get('seconds_per_run', '?')} s per load"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
