"""``cardtable replay --html``: one self-contained HTML file to step through a game.

The file holds everything: the page (``viewer/page.html``), its style and script inlined, and
the frames of :mod:`cardtable.replay.frames` with the record as JSON. It fetches nothing (its
Content-Security-Policy forbids it), draws cards with CSS and inline SVG suit symbols, and
steps with its buttons or the keyboard (arrows, Home/End, Page Up/Down for deals).

What the page may show follows the terminal replay's viewpoints, with one rule more: all hands
open (``--open``) only once the game is over, since a page is easily passed around.

>>> from cardtable.engine.record import load_record
>>> from cardtable_tools.simulation.records import record_random_game
>>> record = load_record(record_random_game("hearts", 4, {"quick": True}, 3))
>>> page = viewer_html(record, Viewpoint(open=True))
>>> page.html.startswith("<!doctype html>"), "http://" in page.html.replace(SVG_NAMESPACE, "")
(True, False)
"""

from __future__ import annotations

import json
import re
from html import escape
from importlib.resources import files
from typing import Any, NamedTuple

from cardtable.engine.record import GameRecord
from cardtable.replay.frames import deal_start, embedded_record, viewer_data
from cardtable.replay.session import OPEN_ONLY_WHEN_OVER, Viewpoint

#: The one URL the page contains: the SVG namespace name, which is never fetched.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
_PLACEHOLDER = re.compile(r"\{\{(TITLE|STYLE|SCRIPT|DATA)\}\}")
# Inside <script>, "</script" or "<!--" in a player's name would end or confuse the element;
# JSON may write any character as \uXXXX, so these never appear literally.
_SCRIPT_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def html_request_problem(record: GameRecord, viewpoint: Viewpoint) -> str | None:
    """Why the page asked for cannot be written, or ``None``."""
    if viewpoint.open and not record.result.get("over"):
        return OPEN_ONLY_WHEN_OVER
    return None


class ViewerPage(NamedTuple):
    html: str
    #: Where the engine refused the record, which the page shows up to there; else ``None``.
    stopped: str | None


def viewer_html(record: GameRecord, viewpoint: Viewpoint, *, deal: int | None = None) -> ViewerPage:
    """The page of ``record`` from ``viewpoint``, opening at its ``deal``-th deal when given."""
    problem = html_request_problem(record, viewpoint)
    if problem:
        raise ValueError(problem)
    data = viewer_data(record, viewpoint)
    data["start"] = deal_start(data, deal) if deal is not None else 0
    data["record"] = embedded_record(record, viewpoint)
    title = f"{record.spec.title} replay · {viewpoint.describe()}"
    parts = {
        "TITLE": escape(title),
        "STYLE": _asset("viewer.css"),
        "SCRIPT": _asset("viewer.js"),
        "DATA": script_json(data),
    }
    # One pass: text put in (a name, the script) is never searched for placeholders again.
    html = _PLACEHOLDER.sub(lambda match: parts[match.group(1)], _asset("page.html"))
    return ViewerPage(html, data["stopped"])


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside an HTML ``<script>`` element.

    >>> script_json({"name": "</script><b>"})
    '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda match: _SCRIPT_UNSAFE[match.group(0)], text)


def _asset(name: str) -> str:
    return files("cardtable.replay").joinpath("viewer", name).read_text(encoding="utf-8")
