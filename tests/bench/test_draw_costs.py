"""The timing behind a weighed world's charges: one report, every part of every game timed.

Whether each charge covers its part is read from the benchmark's figures (docs/proving-it.md),
not asserted on a loaded test machine's clock."""

from __future__ import annotations

import json

import pytest

from cardtable.bots.beliefs import HAND_READ_UNITS, PLACEMENT_UNITS, WORLD_BUILD_UNITS
from cardtable_tools.bench import draw_costs


def test_the_command_times_every_part_of_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    draw_costs.main(["--positions", "3"])
    reports = {report["game"]: report for report in json.loads(capsys.readouterr().out)["games"]}
    assert set(reports) == {"whist", "358", "belote", "hearts"}
    for game, report in reports.items():
        assert report["positions"] == 3 and report["action_us"] > 0
        parts = {"placement", "hand_read", "world_build"} | (
            set() if game == "belote" else {"play_read"}
        )
        assert parts <= set(report), game
        assert ("play_read" in report) == (game != "belote"), "Belote's plays weigh no world"
        for part in parts:
            assert report[part]["us"] > 0 and report[part]["actions"] > 0, (game, part)
        assert report["placement"]["charged"] == PLACEMENT_UNITS
        assert report["hand_read"]["charged"] == HAND_READ_UNITS[game]
        assert report["world_build"]["charged"] == WORLD_BUILD_UNITS
