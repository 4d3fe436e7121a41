"""The ``rules`` strategy: a rule-based player that sees only its seat's observation.

It rebuilds a state from the observation (the hidden cards drawn at random, which the rules
never read) and asks the game's rules for the seat's action, so the rules are written once, on
the engine's state, for this strategy and for the search's playouts alike.

With ``keen`` it plays the keen rule-based player, the hard level's playout
(:func:`cardtable.bots.rules.keen_action`): the tournament weighs that player's habits on
their own, at a thousandth of the cost of weighing them inside the search.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cardtable.bots.determinize import sample_world
from cardtable.bots.observation import acting_seat, normalise_observation
from cardtable.bots.rules import keen_action, rules_action
from cardtable.engine.actions import format_action


class RulesStrategy:
    """Bids from hand strength, plays sensible cards, passes and discards the dangerous ones."""

    name = "rules"

    def __init__(self, keen: bool = False) -> None:
        self.keen = keen
        self._act = keen_action if keen else rules_action

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        view = normalise_observation(observation)
        seat = acting_seat(view)
        if len(view.get("legal_actions") or []) == 1:
            return str(view["legal_actions"][0])
        world = sample_world(view, rng)
        return format_action(self._act(world, seat))
