"""``cardtable run`` into a file or a pipe: no live display, whose last frame would run into the
next line printed ("final rankings" glued to the demonstration's table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cardtable.cli.main import main
from cardtable_tools.stack import run


def test_without_a_terminal_the_demonstration_is_not_shown_live(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: dict[str, Any] = {}

    async def run_stack(log_dir: Path, say: Any, **settings: Any) -> int:
        asked.update(settings)
        return 0

    monkeypatch.setattr(run, "run_stack", run_stack)
    assert main(["run", "--exit-after-demo"]) == 0
    assert asked["live"] is False  # pytest captures stdout: not a terminal
