"""``cardtable bench`` end to end on real servers, kept tiny: it runs, measures, and writes.

The figures themselves are the benchmark's business (``make bench``); here we check that a
run plays real moves, that the projection lag really comes from the scoring service, that
every raw limit was measured and that the JSON and the chart are written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.bench.scrape import HistogramSnapshot, parse_histogram
from cardtable.bench.system import targets_met
from cardtable.cli.main import main

EXPOSITION = """\
# HELP lag_seconds Lag.
# TYPE lag_seconds histogram
lag_seconds_bucket{le="0.01"} 10.0
lag_seconds_bucket{le="0.1"} 90.0
lag_seconds_bucket{le="1.0"} 100.0
lag_seconds_bucket{le="+Inf"} 100.0
lag_seconds_count 100.0
lag_seconds_sum 3.0
"""


def test_quantiles_interpolate_inside_buckets_like_prometheus() -> None:
    histogram = parse_histogram(EXPOSITION, "lag_seconds")
    assert histogram.count == 100
    assert histogram.quantile(0.05) == pytest.approx(0.005)  # half-way into the first bucket
    assert histogram.quantile(0.50) == pytest.approx(0.01 + 0.09 * 40 / 80)
    assert histogram.quantile(0.99) == pytest.approx(0.1 + 0.9 * 9 / 10)


def test_a_window_is_the_difference_of_two_snapshots() -> None:
    before = HistogramSnapshot((0.01, 0.1, float("inf")), (10, 10, 10))
    after = HistogramSnapshot((0.01, 0.1, float("inf")), (10, 30, 30))
    window = after.minus(before)
    assert window.count == 20
    assert 0.01 < (window.quantile(0.5) or 0) <= 0.1
    assert HistogramSnapshot((0.01,), (0,)).quantile(0.5) is None


def test_an_unknown_histogram_is_empty() -> None:
    assert parse_histogram(EXPOSITION, "other").count == 0


@pytest.mark.services
@pytest.mark.parametrize("clients", ["turns", "poll", "pipeline"])
def test_the_bench_command_plays_measures_and_writes_json_and_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], clients: str
) -> None:
    code = main(
        [
            "bench",
            "--tables", "2",
            "--seconds", "3",
            "--raw-seconds", "0.5",
            "--no-half-load",
            "--clients", clients,
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["clients"].startswith(clients)
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == report
    (run,) = report["runs"]
    assert run["tables"] == 2
    assert run["moves"] > 10 and run["errors"] == 0
    assert run["move_latency_p50_ms"] > 0
    assert run["projected_batches"] == run["appended_batches"] > 0
    assert run["projection_lag_p99_ms"] is not None
    assert {"rules", "table", "scoring", "bots", "clients"} <= set(run["cpu_seconds"])
    assert run["cpu_seconds"]["table"] > 0 and run["cpu_seconds"]["rules"] > 0
    raw = report["raw_limits"]
    assert raw["jetstream_appends_per_s"]["sequential"] > 0
    assert raw["postgres_batched_inserts_rows_per_s"] > 0
    assert raw["grpc_unary_calls_per_s"]["64_in_flight"] > 0
    assert run["ratios"]["vs_grpc_unary_sequential"] > 0
    assert (tmp_path / "bench.png").read_bytes().startswith(b"\x89PNG")


def test_latency_targets_count_only_at_the_target_rate() -> None:
    fast = {"moves_per_s": 1200.0, "move_latency_p99_ms": 40.0, "projection_lag_p99_ms": 300.0}
    assert all(targets_met(fast).values())
    slow = {**fast, "moves_per_s": 220.0}
    assert not any(targets_met(slow).values())
    late = {**fast, "projection_lag_p99_ms": None}
    assert targets_met(late) == {
        "moves_per_s": True,
        "move_latency_p99_ms": True,
        "projection_lag_p99_ms": False,
    }
