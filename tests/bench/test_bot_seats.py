"""The bot service's seat bench (``cardtable_tools.bench.bot_seats``), briefly, on real servers.

A few seconds of eleven tables say nothing of how many seats one process holds (that is
``python -m cardtable_tools.bench.bot_seats --tables 50 --quick --strategy normal``). Here we
check that the bench runs against the services as they are now (more tables than one player may
keep open: each has a host of its own) and that its turn check reads every action, the passes
sealed in the log until the deal ends included.
"""

from __future__ import annotations

import pytest

from cardtable.table_service.matchmaking import DEFAULT_SETTINGS
from cardtable_tools.bench.bot_seats import run_bench


@pytest.mark.services
async def test_bots_hold_every_seat_and_each_timer_names_its_turn(
    nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    report = await run_bench(
        tables=11,
        seconds=15.0,
        turn_timer_ms=DEFAULT_SETTINGS.turn_timer_ms,
        quick=True,
        strategy="rules",
    )
    assert report["seats_held"]["max"] == 44
    assert report["bot_moves"] > 0 and report["bot_errors"] == 0
    assert report["turn_timeouts_in_log"] == 0
    assert report["timers_armed"] > 0, "no finished deal: nothing was checked"
    assert report["timers_with_wrong_turn"] == 0
