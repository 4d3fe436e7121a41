"""The search's speed bench: it times the moves it counts, and work it reports is the work
the player did, so the rate is the player's own."""

from __future__ import annotations

import json

import pytest

from cardtable_tools.bench import search_speed


def test_the_rate_is_the_work_done_over_the_cpu_time_it_took(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert search_speed.main(["--player", "search:budget_ms=2", "--game", "whist",
                              "--game", "hearts", "--moves", "6"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert [game["game"] for game in report["games"]] == ["whist", "hearts"]
    for game in report["games"]:
        assert game["moves"] == 6
        # a 2 ms budget is 300 work units; a move stops after the world that reaches it
        assert 6 * 300 <= game["work_units"] < 6 * 3 * 300
        assert game["units_per_cpu_ms"] > 0
        assert game["move_cpu_ms_median"] <= game["move_cpu_ms_p90"]
    again = search_speed.measure_speed("whist", "search:budget_ms=2", 6, seed=1)
    assert again["work_units"] == report["games"][0]["work_units"]  # work does not vary


def test_a_player_that_does_not_search_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        search_speed.main(["--player", "rules", "--moves", "5"])
    assert refused.value.code == 2
    assert "does not search" in capsys.readouterr().err
