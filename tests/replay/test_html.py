"""``cardtable replay --html``: the page's data, what each viewpoint may see, and its safety.

The page itself is driven in a real browser in test_html_browser.py.
"""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cardtable.cli.main import main
from cardtable.engine.record import load_record
from cardtable.replay import frames as frames_module
from cardtable.replay import html as html_module
from cardtable.replay.frames import viewer_data
from cardtable.replay.html import SVG_NAMESPACE, viewer_html
from cardtable.replay.render import card_text
from cardtable.replay.session import Viewpoint
from tests.replay.conftest import game_record

DATA = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)


def page_data(html: str) -> dict[str, Any]:
    found = DATA.search(html)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def write_page(tmp_path: Path, record: dict[str, Any], *options: str) -> tuple[int, Path]:
    source = tmp_path / "game.json"
    source.write_text(json.dumps(record))
    page = tmp_path / "game.html"
    code = main(["replay", "--file", str(source), "--html", str(page), *options])
    return code, page


def test_a_finished_game_open_shows_every_hand_and_carries_the_whole_record(
    tmp_path: Path,
) -> None:
    record = game_record("hearts")
    code, page = write_page(tmp_path, record, "--open")
    assert code == 0
    html = page.read_text()
    data = page_data(html)
    assert data["record"] == record
    assert data["options"]["quick"] in ("true", "false")  # as a table's settings write it
    dealt = data["frames"][0]
    assert all(len(hand["cards"]) == 13 for hand in dealt["hands"])
    assert data["frames"][-1]["over"]


def test_the_page_fetches_nothing(tmp_path: Path) -> None:
    _, page = write_page(tmp_path, game_record("belote"), "--open")
    html = page.read_text()
    assert "default-src 'none'" in html  # the browser refuses any fetch
    outside = html.replace(SVG_NAMESPACE, "")
    for fetching in ("http:", "https:", "//", "src=", "<link", "@import", "url("):
        assert fetching not in outside.split('id="replay-data"')[0], fetching


def test_the_scores_shown_are_the_records(game_name: str) -> None:
    record = game_record(game_name)
    data = viewer_data(load_record(record), Viewpoint(open=True))
    recorded = [
        {"number": deal["number"], "scores": deal["scores"], "totals": deal["totals"]}
        for deal in record["deals"]
        if deal["scores"] is not None
    ]
    assert data["deals"] == recorded
    assert data["result"] == {
        "totals": record["result"]["totals"],
        "places": record["result"]["places"],
    }
    final = data["frames"][-1]
    assert final["over"] and final["scored"] == len(recorded)
    assert final["totals"] == record["result"]["totals"]


def test_rating_changes_are_the_engines_at_equal_ratings() -> None:
    data = viewer_data(load_record(game_record("belote")), Viewpoint(open=True))
    changes = data["ratings"]["changes"]
    assert sorted(changes) == [-20.0, -20.0, 20.0, 20.0]  # Belote: +20 each winner
    assert "records hold no ratings" in data["ratings"]["note"]


def test_a_seats_page_holds_only_that_seats_hand(tmp_path: Path) -> None:
    record = game_record("belote")
    code, page = write_page(tmp_path, record, "--seat", "2")
    assert code == 0
    html = page.read_text()
    data = page_data(html)
    for frame in data["frames"]:
        assert [sorted(hand) for hand in frame["hands"]] == [
            ["count"],
            ["count"],
            ["cards"],
            ["count"],
        ]
    for deal in data["record"]["deals"]:
        assert not {"deck", "actions", "shuffle"} & set(deal)
    assert '"deck"' not in html and '"seed"' not in html
    # Until the first card is played, no other seat's card is anywhere in the page's frames.
    dealt = viewer_data(load_record(record), Viewpoint(open=True))["frames"][0]["hands"]
    turned = data["frames"][0]["chips"]
    others = {card for seat in (0, 1, 3) for card in dealt[seat]["cards"]}
    before_play = json.dumps(
        [frame for frame in data["frames"] if frame["deal_index"] == 0 and not frame["trick"]]
    )
    for card in others:
        if any(card_text(card).plain in chip for chip in turned):
            continue  # the turned-up card is on the table for everyone
        assert f'"{card}"' not in before_play and card_text(card).plain not in before_play


def test_open_hands_need_a_finished_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = game_record("hearts")
    record["deals"] = record["deals"][:2]
    record["result"] = {"over": False, "totals": [], "places": []}
    code, page = write_page(tmp_path, record, "--open")
    assert code == 2
    assert "only for a finished game" in capsys.readouterr().out
    assert not page.exists()
    assert write_page(tmp_path, record, "--seat", "1")[0] == 0


def test_a_name_cannot_end_the_script_that_carries_it(tmp_path: Path) -> None:
    record = game_record("hearts")
    name = "</script><script>alert(1)</script><!--"
    record["seats"][0]["name"] = name
    _, page = write_page(tmp_path, record, "--open")
    html = page.read_text()
    assert html.count("</script>") == 2 and "<!--" not in html.split("<body>")[1]
    assert page_data(html)["record"]["seats"][0]["name"] == name


def test_deal_opens_the_page_at_that_deal(tmp_path: Path) -> None:
    record = game_record("whist")
    code, page = write_page(tmp_path, record, "--open", "--deal", "3")
    assert code == 0
    data = page_data(page.read_text())
    assert data["frames"][data["start"]]["deal"] == 3
    assert data["frames"][data["start"] - 1]["deal"] == 2


def test_viewer_html_reports_where_a_record_stops_following_the_rules() -> None:
    record = game_record("hearts")
    actions = record["deals"][0]["actions"]
    played = next(i for i, entry in enumerate(actions) if entry["action"].startswith("play"))
    actions[played + 1] = dict(actions[played])  # the same card twice
    page = viewer_html(load_record(record), Viewpoint())
    assert page.stopped is not None and "deal 1" in page.stopped
    assert page_data(page.html)["stopped"] == page.stopped


@pytest.mark.parametrize("module", [frames_module, html_module], ids=lambda module: module.__name__)
def test_docstring_examples_pass(module: Any) -> None:
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
