"""Fit the 3-5-8 trick model a cut playout is valued by (``bots/trick_model.py``).

    python -m cardtable_tools.bench.fit_trick_model --deals 20000 --seed 1

Plays ``--deals`` deals with the rule-based player at every seat (its contract, exchanges and
discard included) and, at the start of every trick, keeps each seat's hand features and the
tricks it went on to take. One least-squares fit per kind of contract and number of tricks
left. Writes the coefficients where the search reads them (``--out`` elsewhere) and prints,
per fit, the samples, the spread of the tricks still to take and what the fit leaves of it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cardtable.bots.outlook import contract_kind
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.bots.trick_model import COEFFICIENTS_FILE, hand_features, model_key
from cardtable.engine.games.three_five_eight.rules import (
    HAND_SIZE,
    PLAY_PHASE,
    PLAYERS,
    THREE_FIVE_EIGHT,
    ThreeFiveEightState,
)

#: A progress line on stderr every this many deals.
PROGRESS_EVERY = 5000

Samples = dict[str, tuple[list[list[float]], list[float]]]


def play_deal(rng: random.Random) -> list[tuple[str, list[list[float]], list[int]]]:
    """One rule-based deal: at each trick's start its model key, the seats' features and the
    tricks each went on to take."""
    state = THREE_FIVE_EIGHT.new_game(PLAYERS, None, rng.randrange(PLAYERS))
    assert isinstance(state, ThreeFiveEightState)
    state.deal(shuffled_deck(state, rng))
    while state.phase != PLAY_PHASE:
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))
    kind = contract_kind(state.contract)
    starts = []
    while not state.deal_scores:
        if not state.trick:
            key = model_key(kind, HAND_SIZE - len(state.tricks))
            starts.append((key, hand_features(state), list(state.tricks_won)))
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))
    final = state.tricks_won
    return [
        (key, rows, [final[seat] - won[seat] for seat in range(PLAYERS)])
        for key, rows, won in starts
    ]


def collect(deals: int, seed: int, progress: bool = False) -> Samples:
    rng = random.Random(seed)
    samples: Samples = defaultdict(lambda: ([], []))
    for number in range(1, deals + 1):
        for key, rows, taken in play_deal(rng):
            features, targets = samples[key]
            features.extend(rows)
            targets.extend(float(count) for count in taken)
        if progress and number % PROGRESS_EVERY == 0:
            print(f"fit_trick_model: {number}/{deals} deals", file=sys.stderr, flush=True)
    return samples


def fit(samples: Samples) -> dict[str, Any]:
    """Coefficients by key, and how well each fit does."""
    coefficients: dict[str, list[float]] = {}
    quality: dict[str, dict[str, float]] = {}
    for key in sorted(samples):
        features, targets = (np.array(values, dtype=float) for values in samples[key])
        weights, *_ = np.linalg.lstsq(features, targets, rcond=None)
        residuals = targets - features @ weights
        coefficients[key] = [round(float(weight), 6) for weight in weights]
        quality[key] = {
            "samples": len(targets),
            "spread": round(float(targets.std()), 3),
            "residual_spread": round(float(residuals.std()), 3),
        }
    return {"coefficients": coefficients, "fit": quality}


def default_out() -> Path:
    return Path(str(resources.files("cardtable.bots").joinpath(COEFFICIENTS_FILE)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="fit_trick_model", description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be 1 or more")
    model = {"deals": args.deals, "seed": args.seed, **fit(collect(args.deals, args.seed, True))}
    out = args.out or default_out()
    out.write_text(json.dumps(model, indent=1) + "\n")
    print(f"{'fit':>10} {'samples':>8} {'spread':>7} {'left':>6}")
    for key, quality in model["fit"].items():
        print(
            f"{key:>10} {quality['samples']:>8} {quality['spread']:>7.3f}"
            f" {quality['residual_spread']:>6.3f}"
        )
    print(f"written to {out}")


if __name__ == "__main__":
    main()
