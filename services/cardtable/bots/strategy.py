"""The one interface every computer player implements.

A strategy sees exactly what its seat may see: the engine's observation for that seat (the
dict the table service's typed ``GetTable.seat_view`` decodes to, ``cardtable.views.decode``),
and a random generator the caller owns. It answers with an action in text
form ("play QS", "bid 2", "pass 2C 3D 4H", ...). It never receives the real hidden cards:
that is the whole point, and the bot service can only give it what the seat's view shows.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Protocol


class Strategy(Protocol):
    """Chooses one legal action for the seat whose observation it is given."""

    name: str

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        """An action text, legal for the seat in ``observation`` (``legal_actions`` /
        ``choose_cards`` list what is legal)."""
        ...


class RandomStrategy:
    """A uniformly random legal action: the baseline every other strategy must beat."""

    name = "random"

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        choice = observation.get("choose_cards")
        if choice:
            cards = rng.sample(list(choice["cards"]), int(choice["count"]))
            return " ".join([str(choice["verb"]), *cards])
        actions = list(observation.get("legal_actions") or [])
        if not actions:
            raise ValueError("the seat has no legal action in this observation")
        return str(rng.choice(actions))


def is_offered(action: str, view: Mapping[str, Any]) -> bool:
    """Whether ``action`` is one the seat's view offers (listed, or a valid card choice)."""
    choice = view.get("choose_cards")
    if choice:
        verb, *cards = action.split() or [""]
        offered = set(choice.get("cards") or ())
        return (
            verb == choice.get("verb")
            and len(cards) == int(choice.get("count") or 0)
            and len(set(cards)) == len(cards)
            and set(cards) <= offered
        )
    return action in (view.get("legal_actions") or ())
