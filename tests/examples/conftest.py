"""The stack the client examples play against: one ``cardtable run`` (no demonstration) for
every example test of the session, as a reader's ``make run``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples.stack import running_stack


@pytest.fixture(scope="session")
def example_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A working directory whose ``.run/`` a ``cardtable run`` serves from (``.run/env``)."""
    with running_stack(tmp_path_factory.mktemp("examples"), demo=False) as workdir:
        yield workdir
