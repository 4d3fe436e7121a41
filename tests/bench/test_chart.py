"""The bench's chart: the paced loads drawn against the targets they are judged by."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from cardtable_tools.bench.chart import PacedBar, draw_chart, paced_bars
from cardtable_tools.bench.system import TARGETS


def _run(tables: int, rate: float | None, p50: float, p99: float) -> dict[str, Any]:
    return {
        "tables": tables,
        "target_moves_per_s": rate,
        "moves_per_s": rate or 2000.0,
        "move_latency_p50_ms": p50,
        "move_latency_p99_ms": p99,
        "projection_lag_p50_ms": 20.0,
        "projection_lag_p99_ms": 90.0,
    }


def _report(paced: bool) -> dict[str, Any]:
    return {
        "game": "hearts",
        "machine": {"cpus": 2},
        "seconds_per_run": 20.0,
        "targets": TARGETS,
        "runs": [_run(40, None, 15.0, 23.0), _run(160, None, 52.0, 80.0)],
        "paced": [_run(160, 500.0, 4.8, 9.1), _run(160, 1000.0, 7.4, 16.8)] if paced else [],
        "floor": {
            "runs": [
                _run(160, None, 5.0, 13.7),
                _run(160, 1000.0, 1.1, 2.3),
                _run(160, 500.0, 1.2, 2.8),
            ]
        }
        if paced
        else None,
    }


def _png_width(path: Path) -> int:
    (width,) = struct.unpack(">I", path.read_bytes()[16:20])
    return int(width)


def test_each_paced_load_is_drawn_beside_the_floor_and_its_own_target() -> None:
    assert paced_bars(_report(paced=True)) == [
        PacedBar("1,000/s offered", 7.4, 16.8, floor_p99_ms=2.3, target_ms=50.0),
        PacedBar("500/s offered", 4.8, 9.1, floor_p99_ms=2.8, target_ms=20.0),
    ]


def test_without_paced_loads_the_chart_keeps_its_two_panels(tmp_path: Path) -> None:
    assert paced_bars(_report(paced=False)) == []
    two = draw_chart(_report(paced=False), tmp_path / "two.png")
    three = draw_chart(_report(paced=True), tmp_path / "three.png")
    assert two.read_bytes().startswith(b"\x89PNG") and three.read_bytes().startswith(b"\x89PNG")
    assert _png_width(three) > _png_width(two)  # the third panel, for the paced loads
