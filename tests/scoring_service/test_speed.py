"""How fast the projection goes, beside plain batched inserts into the same PostgreSQL.

This is the scoring benchmark (``cardtable_tools.bench.scoring_rates``) on a small log and the test
run's servers. Run it alone to see the figures: ``pytest tests/scoring_service/test_speed.py
-s``; ``cardtable bench-scoring --games 10000`` is the full-size run whose figures count.
Rates are not asserted here (a busy machine would make that a coin toss, and a log this small
is dominated by starting the reader process): the test checks that every step ran, every rate
was measured, and the rebuild equals the live projection.
"""

from __future__ import annotations

import pytest

from cardtable_tools.bench.scoring_rates import format_report, scoring_rates

GAMES = 60


@pytest.mark.slow
async def test_projection_rates_beside_plain_batched_inserts(
    nats_url: str, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", database_url)
    steps: set[str] = set()

    figures = await scoring_rates(games=GAMES, progress=lambda step, done, total: steps.add(step))

    print("\n" + format_report(figures))
    assert figures["games"] == GAMES
    assert figures["events"] > GAMES * 100
    assert figures["rebuild_equals_live"]
    assert figures["rebuild_vs_plain"] > 0 and figures["live_vs_plain"] > 0
    assert figures["plain_rows_per_s"]["executemany_5000"] > 0
    assert {"rebuild", "live consumer catching up", "appending the log to JetStream"} <= steps
