"""Choosing a move from a seat's own view, as the simplest client of the table service would.

Load benchmarks, fault runs, the hostile-input harness and the tests all play random legal
moves. The view already lists them (``legal_actions``, or ``choose_cards`` for "any N of these
cards"), so no rule is needed here; this is the one place that reads that part of a view.
The benchmark clients pass the view's ``Struct`` as it arrives: converting it to a dict first
cost more client CPU per move than choosing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2


def random_legal_action(
    view: struct_pb2.Struct | Mapping[str, Any], rng: random.Random
) -> str | None:
    """A random legal action from ``view``, or ``None`` when the seat has nothing to do now."""
    choice = _field(view, "choose_cards")
    if choice:
        cards = list(choice["cards"])
        chosen = rng.sample(cards, int(choice["count"]))
        return " ".join([str(choice["verb"]), *chosen])
    actions = _field(view, "legal_actions")
    if actions:
        return str(rng.choice(list(actions)))
    return None


def _field(view: struct_pb2.Struct | Mapping[str, Any], name: str) -> Any:
    """``view[name]`` for a Struct or a dict; None when absent or null."""
    if isinstance(view, struct_pb2.Struct):
        value = view.fields.get(name)
        if value is None or value.WhichOneof("kind") in (None, "null_value"):
            return None
        return view[name]
    return view.get(name)
