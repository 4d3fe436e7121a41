"""The real rules service in-process, as the table-service tests use it; and one ``cardtable
run`` with its demonstration, shared by the tests that read what it printed and use it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples.stack import running_stack
from tests.table_service.conftest import rules_address

__all__ = ["demo_stack", "rules_address"]


@pytest.fixture(scope="session")
def demo_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A working directory with a ``cardtable run`` (demonstration played) serving from its
    ``.run/``; what it printed is in ``run-output.txt``. Its tests are in one group of
    ``SHARED_STACKS`` (tests/conftest.py), so that under xdist one worker starts it, once."""
    with running_stack(tmp_path_factory.mktemp("demo"), demo=True) as workdir:
        yield workdir
