"""The replay page in a real browser: a whole Hearts game and a whole Belote game, stepped
through with the keyboard in headless chromium, the scores on the page checked against the
record at every deal, and screenshots kept.

Screenshots go to ``tests/artifacts/replay/`` ($CARDTABLE_ARTIFACTS/replay when set); the test
prints their paths. ``make browser`` installs chromium when it is missing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardtable.cli.main import main
from tests.replay.chromium import Chromium, Page, find_chromium
from tests.replay.conftest import game_record

pytestmark = pytest.mark.browser

#: What the page shows now, read from its DOM: the step, the score sheet, the trick, the
#: places, and which seats show their cards face up.
STATE = """(() => {
  const numbers = (row, selector) =>
    [...row.querySelectorAll(selector)].map((cell) => Number(cell.textContent));
  return {
    step: Number(document.body.dataset.step),
    steps: Number(document.body.dataset.steps),
    rows: [...document.querySelectorAll("#score-sheet tbody tr")].map((row) => ({
      number: Number(row.cells[0].textContent),
      scores: numbers(row, ".score"),
      totals: numbers(row, ".total"),
    })),
    seatTotals: [...document.querySelectorAll(".seat .seat-head .total")].map(
      (cell) => Number(cell.textContent)),
    trick: document.querySelectorAll("#trick .card").length,
    faceUp: [...document.querySelectorAll(".seat")]
      .filter((seat) => seat.querySelector(".hand .card:not(.back)"))
      .map((seat) => Number(seat.dataset.seat)),
    places: document.getElementById("result-panel").hidden ? null :
      [...document.querySelectorAll("#places tbody tr")].map((row) => ({
        seat: Number(row.dataset.seat),
        place: Number(row.querySelector(".place").textContent),
        total: Number(row.querySelector(".total").textContent),
      })),
  };
})()"""


def artifacts() -> Path:
    root = os.environ.get("CARDTABLE_ARTIFACTS") or Path(__file__).parents[1] / "artifacts"
    folder = Path(root) / "replay"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    binary = find_chromium()
    if binary is None:
        pytest.fail("no chromium: run `make browser` (it installs Debian's chromium)")
    folder = tmp_path_factory.mktemp("chromium")
    chromium = Chromium(binary, folder / "profile", folder / "chromium.log")
    try:
        yield chromium
    finally:
        chromium.close()


def write_page(folder: Path, name: str, record: dict[str, Any], *view: str) -> Path:
    source = folder / f"{name}.json"
    source.write_text(json.dumps(record))
    page = folder / f"{name}.html"
    assert main(["replay", "--file", str(source), "--html", str(page), *view]) == 0
    return page


def step_through(page: Page, record: dict[str, Any], name: str, *, seat: int | None) -> list[Path]:
    """Press → from the first step to the last, checking the page against the record."""
    shots = [page.screenshot(artifacts() / f"{name}-start.png")]
    scored = [deal for deal in record["deals"] if deal["scores"] is not None]
    state = page.evaluate(STATE)
    assert state["step"] == 1 and state["rows"] == []
    steps = state["steps"]
    mid_trick_shot = False
    for step in range(2, steps + 1):
        page.press("ArrowRight")
        state = page.evaluate(STATE)
        assert state["step"] == step
        if seat is not None:
            assert set(state["faceUp"]) <= {seat}, f"step {step}: another seat's cards show"
        rows = state["rows"]
        assert len(rows) <= len(scored)
        if rows:  # every deal scored so far, as the record has it
            deal = scored[len(rows) - 1]
            assert rows[-1] == {k: deal[k] for k in ("number", "scores", "totals")}
            assert state["seatTotals"] == deal["totals"]
        if not mid_trick_shot and state["trick"] == 3 and len(rows) >= 1:
            shots.append(page.screenshot(artifacts() / f"{name}-mid-trick.png"))
            mid_trick_shot = True
    assert len(state["rows"]) == len(scored)
    assert [row["number"] for row in state["rows"]] == [deal["number"] for deal in scored]
    result = record["result"]
    assert sorted((row["seat"], row["place"], row["total"]) for row in state["places"]) == [
        (seat_, result["places"][seat_], result["totals"][seat_])
        for seat_ in range(record["players"])
    ]
    shots.append(page.screenshot(artifacts() / f"{name}-end.png"))
    page.press("ArrowRight")  # past the end: stays
    assert page.evaluate(STATE)["step"] == steps
    page.press("Home")
    assert page.evaluate(STATE)["step"] == 1
    page.press("End")
    page.press("ArrowLeft")
    assert page.evaluate(STATE)["step"] == steps - 1
    page.press("PageUp")
    page.press("PageDown")
    assert address_step(page) == page.evaluate(STATE)["step"]
    return shots


def address_step(page: Page) -> int:
    """The step the page's address names, once it has caught up with the last key (the page
    rewrites it a moment after the last step, as browsers throttle history rewrites)."""
    deadline = time.monotonic() + 5
    while True:
        wanted = page.evaluate(STATE)["step"]
        shown = page.evaluate("location.hash")
        if shown == f"#step={wanted}" or time.monotonic() > deadline:
            return int(shown.removeprefix("#step=") or 0)
        time.sleep(0.05)


def assert_fetched_nothing(page: Page) -> None:
    urls = [event["params"]["request"]["url"] for event in page.events("Network.requestWillBeSent")]
    assert [url for url in urls if not url.startswith(("file:", "data:", "blob:", "about:"))] == []
    assert page.events("Runtime.exceptionThrown") == []


@pytest.mark.parametrize(
    ("game", "view"),
    [("hearts", ("--open",)), ("belote", ("--seat", "0"))],
    ids=["hearts-open", "belote-seat-0"],
)
def test_a_whole_game_stepped_through_with_the_keyboard(
    browser: Chromium, tmp_path: Path, game: str, view: tuple[str, ...]
) -> None:
    record = game_record(game)
    name = f"{game}-{'-'.join(part.strip('-') for part in view)}"
    page = browser.open(write_page(tmp_path, name, record, *view).as_uri())
    seat = int(view[1]) if view[0] == "--seat" else None
    shots = step_through(page, record, name, seat=seat)
    assert_fetched_nothing(page)
    print("screenshots:", *map(str, shots), sep="\n  ")


def test_the_url_fragment_opens_that_step(browser: Chromium, tmp_path: Path) -> None:
    record = game_record("hearts")
    page = browser.open(write_page(tmp_path, "hearts", record, "--open").as_uri() + "#step=60")
    assert page.evaluate(STATE)["step"] == 60
    page.press("ArrowLeft")
    assert address_step(page) == 59
