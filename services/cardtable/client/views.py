"""Choosing a move from a seat's own view, as the simplest client of the table service would.

Load benchmarks, fault runs, the hostile-input harness and the tests all play random legal
moves. The view already lists them (``legal_actions``, or ``choose_cards`` for "any N of these
cards"), so no rule is needed here; this is the one place that reads that part of a view.
"""

from __future__ import annotations

import random

from cardtable_api.common.v1 import views_pb2


def random_legal_action(view: views_pb2.SeatView, rng: random.Random) -> str | None:
    """A random legal action from ``view``, or ``None`` when the seat has nothing to do now."""
    if view.HasField("choose_cards"):
        choice = view.choose_cards
        chosen = rng.sample(list(choice.cards), choice.count)
        return " ".join([choice.verb, *chosen])
    if view.legal_actions:
        return rng.choice(view.legal_actions).action
    return None
