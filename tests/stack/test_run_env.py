"""``.run/env`` and the run directory's lock, without starting a stack."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cardtable_tools.stack.run_env import env_file_text, write_env_file
from cardtable_tools.stack.run_lock import RunDirectoryBusyError, run_directory_lock


def test_the_env_file_is_the_owners_only_and_bash_reads_back_every_value(tmp_path: Path) -> None:
    awkward = {"NATS_PASSWORD": "a'b\"c $HOME `x` \\ d", "DATABASE_URL": "postgresql://p@h:1/d"}
    path = tmp_path / "env"
    path.write_text("old")
    path.chmod(0o644)
    write_env_file(path, env_file_text(awkward, Path("/opt/my venv/bin")))
    assert path.stat().st_mode & 0o777 == 0o600
    shown = subprocess.run(
        ["bash", "-c", f'source "{path}" && printf "%s\\n" "$NATS_PASSWORD" "$PATH"'],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown == [awkward["NATS_PASSWORD"], "/opt/my venv/bin:/usr/bin:/bin"]


def test_a_name_that_is_no_shell_variable_is_refused() -> None:
    with pytest.raises(ValueError, match="not a shell variable name"):
        env_file_text({"A;rm": "x"})


def test_a_second_run_on_the_same_directory_is_refused_with_the_holders_pid(
    tmp_path: Path,
) -> None:
    # flock holds per open file, so a second open in this same process meets the lock too
    with run_directory_lock(tmp_path):
        with pytest.raises(RunDirectoryBusyError) as busy, run_directory_lock(tmp_path):
            pass
        assert f"another cardtable run (pid {os.getpid()}) is serving from {tmp_path}/" in str(
            busy.value
        )
    with run_directory_lock(tmp_path):  # released: the next run may start
        pass
