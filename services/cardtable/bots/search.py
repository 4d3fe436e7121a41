"""The ``search`` strategy: determinized Monte Carlo search within a time budget per move.

For each move it repeats, until the budget is spent: draw one deal consistent with everything
the seat has seen (:mod:`cardtable.bots.determinize`), build the whole state through the engine,
and for every candidate action play a copy of that state to the end of the deal with the
playout policy (the rule-based player by default). Each candidate is scored by the seat's
result for the deal against the others (its score minus the others' mean, oriented so higher is
better: points count against in Hearts, and in Belote the seat's score is its team's), averaged
over the deals drawn; the best average wins. Every candidate meets the same deals, so their
differences are not swamped by the luck of the draw.

It is given the observation only, never the real state, so it cannot look at hidden cards.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardtable.bots.determinize import sample_world
from cardtable.bots.observation import acting_seat, normalise_observation
from cardtable.bots.random_play import random_action
from cardtable.bots.rules import rules_action
from cardtable.engine.actions import Action, format_action, parse_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState

#: Chooses the action of the seat to act in a playout.
PlayoutPolicy = Callable[[GameState, int, random.Random], Action]

DEFAULT_BUDGET_MS = 200.0
#: For a compound action (pass three, discard four) the rule-based choice and a few variants
#: of it, one card swapped, are the candidates: listing every combination is out of reach.
DEFAULT_SET_CANDIDATES = 6


def rules_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return rules_action(state, seat)


def random_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return random_action(state, seat, rng)


PLAYOUT_POLICIES: dict[str, PlayoutPolicy] = {"rules": rules_policy, "random": random_policy}


def deal_advantage(scores: Sequence[int], seat: int, lower_is_better: bool) -> float:
    """The seat's deal score minus the mean of the others', higher is better in every game."""
    sign = -1 if lower_is_better else 1
    others = [score for other, score in enumerate(scores) if other != seat]
    return sign * (scores[seat] - sum(others) / len(others))


def evaluate(
    world: GameState, seat: int, action: Action, policy: PlayoutPolicy, rng: random.Random
) -> float:
    """Apply ``action`` to a copy of ``world`` and play the deal out with ``policy``; the
    seat's deal advantage. The action itself may end the deal (the last pass in Belote)."""
    state = world.clone()
    deals = len(state.deal_scores)
    state.apply(seat, action)
    while len(state.deal_scores) == deals:
        actor = state.to_act()[0]
        state.apply(actor, policy(state, actor, rng))
    return deal_advantage(state.deal_scores[-1], seat, state.spec.lower_is_better)


class SearchStrategy:
    """Determinized Monte Carlo search over the seat's legal actions.

    ``budget_ms`` bounds the thinking time per move; ``worlds`` instead fixes how many deals
    are drawn (deterministic for a given rng, for tests and reproducible runs).
    """

    name = "search"

    def __init__(
        self,
        budget_ms: float = DEFAULT_BUDGET_MS,
        worlds: int | None = None,
        playout: str = "rules",
        set_candidates: int = DEFAULT_SET_CANDIDATES,
    ) -> None:
        if playout not in PLAYOUT_POLICIES:
            raise ValueError(f"unknown playout policy {playout!r}: use rules or random")
        if budget_ms <= 0 or (worlds is not None and worlds < 1):
            raise ValueError("the budget and the number of worlds must be positive")
        self.budget_ms = float(budget_ms)
        self.worlds = worlds
        self.playout = playout
        self.policy = PLAYOUT_POLICIES[playout]
        self.set_candidates = set_candidates
        #: Deals drawn for the last move, for benchmarks and logs.
        self.last_worlds = 0

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        started = time.perf_counter()
        view = normalise_observation(observation)
        seat = acting_seat(view)
        listed = [str(action) for action in view.get("legal_actions") or []]
        self.last_worlds = 0
        if len(listed) == 1:
            return listed[0]
        hidden = hidden_cards(view)
        world = sample_world(view, rng, hidden)
        candidates = (
            [parse_action(text) for text in listed]
            if listed
            else self._set_candidates(world, seat, rng)
        )
        if len(candidates) == 1:
            return format_action(candidates[0])
        # The rule-based choice goes first, so that it wins ties.
        preferred = rules_action(world, seat)
        if preferred in candidates:
            candidates.remove(preferred)
            candidates.insert(0, preferred)
        totals = [0.0] * len(candidates)
        deadline = started + self.budget_ms / 1000
        drawn = 0
        while True:
            for index, action in enumerate(candidates):
                totals[index] += evaluate(world, seat, action, self.policy, rng)
            drawn += 1
            if self.worlds is not None:
                if drawn >= self.worlds:
                    break
            elif time.perf_counter() >= deadline:
                break
            world = sample_world(view, rng, hidden)
        self.last_worlds = drawn
        best = max(range(len(candidates)), key=lambda index: (totals[index], -index))
        return format_action(candidates[best])

    def _set_candidates(self, world: GameState, seat: int, rng: random.Random) -> list[Action]:
        """The rule-based choice of cards, and variants with one card swapped for another."""
        choice = world.card_set_choice(seat)
        base = rules_action(world, seat)
        if choice is None:
            return [base]
        chosen = list(base.cards)
        others = [card for card in choice.cards if card not in chosen]
        swaps = [(out, into) for out in range(len(chosen)) for into in others]
        rng.shuffle(swaps)
        candidates = [base]
        for out, into in swaps[: max(self.set_candidates - 1, 0)]:
            variant = list(chosen)
            variant[out] = into
            candidates.append(choice.make(variant))
        return candidates
