"""How often a searching player plays the card the rule-based player would: the figure behind
``PLAY_AGREEMENT`` in ``bots/beliefs.py``.

    python -m cardtable_tools.bench.play_agreement --game whist --budget-ms 3 --plays 400

Plays games with the search at every seat and, at each play with more than one legal card,
asks the rule-based player what it would have played. Prints one JSON object: the agreement
overall and by number of legal cards (five or more together), with how many plays each share
counts, beside ``a ** (n - 1)`` (``a`` the game's ``PLAY_AGREEMENT``), the model hard reads the
others' plays by.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field

from cardtable.bots.beliefs import PLAY_AGREEMENT
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.bots.search import SearchStrategy
from cardtable.engine.actions import parse_action
from cardtable.engine.registry import game_spec

#: Plays among this many legal cards or more are counted together.
MOST_CHOICES = 5
#: A progress line on stderr every this many plays.
PROGRESS_EVERY = 100


@dataclass
class Agreement:
    """Plays counted, and those that were the rule-based choice, by number of legal cards."""

    agreed: dict[int, int] = field(default_factory=dict)
    plays: dict[int, int] = field(default_factory=dict)

    def count(self, choices: int, agreed: bool) -> None:
        key = min(choices, MOST_CHOICES)
        self.plays[key] = self.plays.get(key, 0) + 1
        self.agreed[key] = self.agreed.get(key, 0) + agreed

    @property
    def total(self) -> int:
        return sum(self.plays.values())

    def share(self, choices: int) -> float:
        return self.agreed.get(choices, 0) / self.plays[choices]


def measure_play_agreement(
    game: str, players: int, budget_ms: float, plays: int, rng: random.Random, progress: bool
) -> Agreement:
    """Agreement of the search at ``budget_ms`` with the rule-based player over ``plays``
    plays that had a choice."""
    search = SearchStrategy(budget_ms=budget_ms)
    spec = game_spec(game)
    agreement = Agreement()
    while agreement.total < plays:
        state = spec.new_game(players, None, rng.randrange(players))
        while not state.is_over() and agreement.total < plays:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            action = parse_action(search.choose(state.observation(seat), rng))
            legal = state.legal_actions(seat)
            if state.phase == "play" and len(legal) > 1:
                agreement.count(len(legal), rules_action(state, seat) == action)
                if progress and agreement.total % PROGRESS_EVERY == 0:
                    print(f"play_agreement: {agreement.total}/{plays} plays", file=sys.stderr)
            state.apply(seat, action)
    return agreement


def report(agreement: Agreement, game: str) -> dict[str, object]:
    return {
        "plays": agreement.total,
        "agreement": round(sum(agreement.agreed.values()) / agreement.total, 3),
        "by_choices": {
            f"{choices}+" if choices == MOST_CHOICES else str(choices): {
                "plays": agreement.plays[choices],
                "agreement": round(agreement.share(choices), 3),
                "model": round(PLAY_AGREEMENT[game] ** (choices - 1), 3),
            }
            for choices in sorted(agreement.plays)
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(PLAY_AGREEMENT), default="whist")
    parser.add_argument("--players", type=int, default=0, help="default: 3 in 3-5-8, else 4")
    parser.add_argument("--budget-ms", type=float, default=3.0)
    parser.add_argument("--plays", type=int, default=400)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    players = args.players or (3 if args.game == "358" else 4)
    agreement = measure_play_agreement(
        args.game, players, args.budget_ms, args.plays, random.Random(args.seed), progress=True
    )
    print(
        json.dumps({"game": args.game, "budget_ms": args.budget_ms, **report(agreement, args.game)})
    )


if __name__ == "__main__":
    main()
