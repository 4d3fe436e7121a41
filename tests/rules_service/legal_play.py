"""A random legal action of a seat, asked of the rules service's own handler, for tests that
play games through the servicer's functions."""

from __future__ import annotations

import random

from cardtable.rules_service.servicer import legal_actions
from cardtable_api.rules.v1 import rules_pb2


def random_legal_action(state: rules_pb2.GameState, seat: int, rng: random.Random) -> str:
    """One of ``seat``'s legal actions in ``state``; for "any N of these cards", N at random."""
    legal = legal_actions(rules_pb2.LegalActionsRequest(state=state, seat=seat))
    if legal.HasField("choose_cards"):
        cards = rng.sample(list(legal.choose_cards.cards), legal.choose_cards.count)
        return " ".join([legal.choose_cards.verb, *cards])
    return rng.choice(list(legal.actions))
