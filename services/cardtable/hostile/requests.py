"""The generator of each hostile kind, by kind name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cardtable.hostile.calls import HostileRequest, Material
from cardtable.hostile.rules_requests import GENERATORS as RULES_GENERATORS
from cardtable.hostile.table_requests import GENERATORS as TABLE_GENERATORS

Generator = Callable[[Material], Awaitable[HostileRequest]]


def generators() -> dict[str, Generator]:
    """Every kind's generator; the table service's kinds and the rules service's."""
    return {**TABLE_GENERATORS, **RULES_GENERATORS}
