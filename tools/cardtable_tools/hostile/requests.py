"""The generator of each hostile kind, by kind name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cardtable_tools.hostile.calls import HostileRequest, Material, sometimes_pipelined
from cardtable_tools.hostile.rules_requests import GENERATORS as RULES_GENERATORS
from cardtable_tools.hostile.table_requests import GENERATORS as TABLE_GENERATORS

Generator = Callable[[Material], Awaitable[HostileRequest]]

#: Kinds about the unary message's own size against the transport limit: inside a
#: ``Pipeline`` message they would be another size, so they always go unary.
UNARY_ONLY = frozenset({"near_transport_limit", "over_transport_limit"})


def generators() -> dict[str, Generator]:
    """Every kind's generator; the table service's kinds and the rules service's.

    Each service's ``Pipeline`` answers a call with the same checks as its unary method, so
    every kind's calls that a pipeline can carry are sent through one half of the time.
    """
    every = {**TABLE_GENERATORS, **RULES_GENERATORS}
    return {
        kind: generator if kind in UNARY_ONLY else _sometimes_pipelined(generator)
        for kind, generator in every.items()
    }


def _sometimes_pipelined(generator: Generator) -> Generator:
    async def generate(material: Material) -> HostileRequest:
        return sometimes_pipelined(await generator(material), material.rng)

    return generate
