"""The TypeScript client of ``examples/typescript/`` works as the README shows it (issue #23).

The README's block for it is run as printed, from the checkout, after ``source .run/env`` of a
``cardtable run`` of this test's own: ``npm ci`` from the committed package-lock.json, the
contracts generated from ``proto/`` and compiled, then the client, which plays a Hearts seat
over gRPC and recomputes the scores from the table's events in JetStream. It passes only when
the client exits 0 with its verdict that every score agrees; it exits non-zero, and this test
fails, on any difference. Node and npm are required: without them this fails, never skips.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.examples.stack import stack_environment
from tests.stack.test_readme_examples import README, SKIP, readme_examples

pytestmark = [pytest.mark.services, pytest.mark.timeout(600)]

CHECKOUT = README.parent
EXAMPLE = "examples/typescript"


def the_readme_block() -> str:
    """The README's one shell block that runs the TypeScript client."""
    blocks = [
        example
        for example in readme_examples(README.read_text(encoding="utf-8"))
        if f"cd {EXAMPLE}" in example.code
    ]
    assert len(blocks) == 1, f"README.md should show the client in one block, not {len(blocks)}"
    assert blocks[0].mode == SKIP  # the README test, whose shells sit outside the checkout
    return blocks[0].code


def test_the_typescript_client_plays_hearts_and_its_recount_matches(example_stack: Path) -> None:
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is needed (Node 20 with npm): install it, see README"
    script = f"set -euo pipefail\nsource {example_stack}/.run/env\n{the_readme_block()}"
    started = time.monotonic()
    finished = subprocess.run(
        ["bash", "-c", script],
        cwd=CHECKOUT,
        env=stack_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=540,
    )
    printed = f"--- stdout\n{finished.stdout[-6000:]}\n--- stderr\n{finished.stderr[-3000:]}"
    seconds = time.monotonic() - started
    assert finished.returncode == 0, f"exit {finished.returncode} after {seconds:.0f} s\n{printed}"
    assert re.search(r"^verdict: scores equal", finished.stdout, re.MULTILINE), printed
    assert "differs:" not in finished.stdout, printed
    played = re.search(r"^played seat \d of hearts table .*: (\d+) moves", finished.stdout, re.M)
    assert played and int(played.group(1)) >= 13, printed  # a whole deal's cards at least
    recomputed = re.search(r"^recomputed totals (\S+) places (\S+)$", finished.stdout, re.M)
    scoring = re.search(r"^scoring service: totals (\S+) places (\S+) ", finished.stdout, re.M)
    assert recomputed and scoring and recomputed.groups() == scoring.groups(), printed
