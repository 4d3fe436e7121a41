"""Measure what each set of 3-5-8 contracts still to play is worth (``bots/contract_sets.py``).

    python -m cardtable_tools.bench.fit_contract_sets --deals 10000 --seed 7

For every kind of set of contracts (how many trump contracts, whether NT and MT), smallest
first, plays ``--deals`` first deals of a game with the rule-based player at every seat and the
declarer left with just such a set to choose from (its trump suits drawn); a set's value is the
declarer's mean deal score plus the value of the set its choice leaves.
Writes the values where the search reads them (``--out`` elsewhere) and prints, beside each
set's value, what the contracts' forced values (``CONTRACT_VALUE``) add up to.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
from importlib import resources
from pathlib import Path

from cardtable.bots.contract_sets import SETS_FILE, set_key
from cardtable.bots.outlook import forced_worth
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACT_PHASE,
    CONTRACTS,
    MINIMUM_TRICKS,
    NO_TRUMP,
    THREE_FIVE_EIGHT,
    ThreeFiveEightState,
)


def chosen_and_score(contracts_left: frozenset[str], rng: random.Random) -> tuple[str, float]:
    """One deal whose declarer may choose only among ``contracts_left``: the rule-based
    player's choice and the declarer's deal score."""
    state = THREE_FIVE_EIGHT.new_game(3, None, rng.randrange(3))
    assert isinstance(state, ThreeFiveEightState)
    state.deal(shuffled_deck(state, rng))
    state.used[state.declarer] = [c for c in CONTRACTS if c not in contracts_left]
    chosen = ""
    while not state.deal_scores:
        seat = state.to_act()[0]
        action = rules_action(state, seat)
        if state.phase == CONTRACT_PHASE:
            chosen = str(action.choice)
        state.apply(seat, action)
    return chosen, float(state.deal_scores[-1][state.declarer])


def measure(deals: int, seed: int, progress: bool = False) -> dict[str, float]:
    """Every kind of set's value by :func:`set_key`, the empty set's 0. Each deal of a kind
    draws which trump suits it holds, as the suits are alike."""
    rng = random.Random(seed)
    suits = [contract for contract in CONTRACTS if contract not in (NO_TRUMP, MINIMUM_TRICKS)]
    values: dict[str, float] = {set_key([]): 0.0}
    kinds = [
        (trumps, others)
        for size in range(1, len(CONTRACTS) + 1)
        for trumps in range(min(size, len(suits)) + 1)
        for others in itertools.combinations((NO_TRUMP, MINIMUM_TRICKS), size - trumps)
    ]
    for trumps, others in kinds:
        totals = []
        for _ in range(deals):
            left = frozenset(rng.sample(suits, trumps)) | frozenset(others)
            chosen, score = chosen_and_score(left, rng)
            totals.append(score + values[set_key(left - {chosen})])
        values[set_key(others + tuple(suits[:trumps]))] = round(statistics.fmean(totals), 3)
        if progress:
            print(
                f"fit_contract_sets: {len(values) - 1}/{len(kinds)} kinds of sets",
                file=sys.stderr,
                flush=True,
            )
    return values


def kind_size(key: str) -> int:
    trumps, *others = key.split()
    return int(trumps[1:]) + len(others)


def forced_sum(key: str) -> float:
    """The forced values' sum for a set of the kind ``key`` names."""
    trumps, *others = key.split()
    return forced_worth(["S"] * int(trumps[1:]) + others)


def default_out() -> Path:
    return Path(str(resources.files("cardtable.bots").joinpath(SETS_FILE)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="fit_contract_sets", description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=10000, help="deals for each kind of set")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be 1 or more")
    values = measure(args.deals, args.seed, progress=True)
    out = args.out or default_out()
    data = {"deals": args.deals, "seed": args.seed, "values": values}
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{'contracts left':<16} {'value':>7} {'forced':>7}")
    for key in sorted(values, key=lambda key: (kind_size(key), key)):
        print(f"{key:<16} {values[key]:>7.2f} {forced_sum(key):>7.2f}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
