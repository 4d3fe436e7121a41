"""The examples in the platform's docstrings run, so they cannot drift from the code."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from cardtable.platform import (
    event_upcasting,
    fact_messages,
    fact_upcasting,
    logging,
    rated_tables,
    settings,
)

MODULES = [settings, logging, rated_tables, fact_messages, fact_upcasting, event_upcasting]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples_pass(module: ModuleType) -> None:
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS)

    assert results.attempted > 0
    assert results.failed == 0
