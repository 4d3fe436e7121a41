"""The layers of docs/architecture.md hold, and the check that enforces them fails on a breach.

``make lint`` runs the same contracts (``lint-imports``, configured in pyproject.toml); here
they run on the tree as it is, and on a copy given one import that crosses a layer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run in ``root``, importing the packages under it."""
    binary = LINT_IMPORTS if LINT_IMPORTS.exists() else Path(shutil.which("lint-imports") or "")
    return subprocess.run(
        [str(binary), "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{root / 'services'}:{root / 'tools'}"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def copy_of_the_tree(target: Path) -> Path:
    for part in ("services", "tools"):
        shutil.copytree(REPO / part, target / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", target / "pyproject.toml")
    return target


def test_the_tree_keeps_every_contract() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_shared_module_importing_a_service_breaks_the_layers(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path)
    opening = tree / "services" / "cardtable" / "eventlog" / "opening.py"
    opening.write_text(opening.read_text() + "\nfrom cardtable.table_service import errors\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "cardtable.eventlog is not allowed to import cardtable.table_service" in result.stdout


def test_one_service_importing_another_breaks_the_layers(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path)
    main = tree / "services" / "cardtable" / "bot_service" / "main.py"
    main.write_text(main.read_text() + "\nfrom cardtable.table_service import errors\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "cardtable.bot_service is not allowed to import cardtable.table_service" in result.stdout


def test_the_engine_doing_io_breaks_its_purity(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path)
    cards = tree / "services" / "cardtable" / "engine" / "cards.py"
    cards.write_text(cards.read_text() + "\nimport asyncio\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "cardtable.engine.cards -> asyncio" in result.stdout
