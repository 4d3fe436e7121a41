"""The projection lag at a paced load (``cardtable_tools.bench.scoring_lag``), briefly, on
real servers.

A few seconds at 200 messages a second say nothing about issue #5's target (that is
``cardtable bench-scoring --lag-rate 1000 --lag-seconds 30``). Here we check what makes the
figures trustworthy: the log really went out at the asked-for pace, the scoring service process
projected and counted every message appended (its own histogram, not ours), and the lag figures
are measurements rather than placeholders.
"""

from __future__ import annotations

import pytest

from cardtable_tools.bench.scoring_lag import format_lag, projection_lag_at_rate
from cardtable_tools.bench.scrape import HistogramSnapshot

RATE = 200.0
SECONDS = 3.0
#: Enough for every one of the 200 tables in play to be past its lobby when measuring starts.
WARM_UP = 2000


def test_the_share_within_a_bucket_bound_is_exact() -> None:
    histogram = HistogramSnapshot((0.1, 0.25, 0.5, float("inf")), (50, 99, 100, 100))
    assert histogram.share_within(0.25) == pytest.approx(0.99)
    assert histogram.share_within(0.3) == pytest.approx(0.99)  # the bucket below 0.3
    assert histogram.share_within(0.05) == 0
    assert HistogramSnapshot((0.1,), (0,)).share_within(0.1) is None


@pytest.mark.services
async def test_a_paced_log_is_projected_and_every_message_counted_by_the_service(
    nats_url: str, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", database_url)
    last_report: dict[str, tuple[int, int]] = {}

    def progress(step: str, done: int, total: int) -> None:
        last_report[step] = (done, total)

    figures = await projection_lag_at_rate(RATE, SECONDS, progress, warm_up=WARM_UP)

    print("\n" + "\n".join(format_lag(figures)))
    messages = round(RATE * SECONDS)
    assert figures["messages"] == messages
    assert figures["projected_messages"] == messages  # the service's histogram, after warm-up
    assert figures["dead_letters"] == 0  # projected, not refused: the log is signed
    assert figures["warm_up_messages"] == WARM_UP
    assert figures["achieved_messages_per_s"] == pytest.approx(RATE, rel=0.05)
    assert figures["kept_pace"]
    assert figures["seconds"] == pytest.approx(SECONDS, rel=0.1)
    assert figures["events"] > messages  # past the lobby, moves bring facts with them
    lag_ms = [figures[f"projection_lag_p{share}_ms"] for share in (50, 95, 99)]
    assert 0 < lag_ms[0] <= lag_ms[1] <= lag_ms[2]
    assert 0 < figures["share_within_target"] <= 1
    assert figures["cpu_seconds"]["scoring"] > 0
    assert figures["cpu_ms_per_message"]["scoring"] > 0
    # The verdict is about 1,000 messages/s: a lag measured at 200 cannot meet it.
    assert figures["target_met"] is False
    assert last_report["lag: appending at 200 messages/s"] == (messages, messages)
    assert last_report["lag: warming up (unpaced)"] == (WARM_UP, WARM_UP)
