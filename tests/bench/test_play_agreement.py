"""The measurement behind ``PLAY_AGREEMENT``: the search plays the rule-based card about as
often as the model hard reads the others' plays by says."""

from __future__ import annotations

import json
import random

import pytest

from cardtable.bots.beliefs import PLAY_AGREEMENT
from cardtable_tools.bench import play_agreement


@pytest.mark.parametrize("game", ["whist", "hearts"])
def test_the_search_agrees_with_the_rules_as_the_model_says_between_two_cards(game: str) -> None:
    agreement = play_agreement.measure_play_agreement(
        game, 4, budget_ms=3, plays=200, rng=random.Random(3), progress=False
    )
    assert agreement.total == 200
    assert agreement.share(2) == pytest.approx(PLAY_AGREEMENT[game], abs=0.1)
    # the more cards, the less often the rule-based one
    among_more = sum(agreement.agreed[n] for n in agreement.plays if n > 2) / sum(
        agreement.plays[n] for n in agreement.plays if n > 2
    )
    assert among_more < agreement.share(2)


def test_the_command_prints_one_report(capsys: pytest.CaptureFixture[str]) -> None:
    play_agreement.main(["--game", "358", "--budget-ms", "1", "--plays", "30"])
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == "358" and report["plays"] == 30
    assert sum(entry["plays"] for entry in report["by_choices"].values()) == 30
