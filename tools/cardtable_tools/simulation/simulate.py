"""Whole random games, engine only: the ``cardtable simulate`` command's work."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from cardtable.engine.registry import game_spec
from cardtable_tools.simulation.invariants import InvariantChecker
from cardtable_tools.simulation.playout import play_random_game


def simulate(
    game: str,
    players: int | None,
    games: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    check_invariants: bool = True,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play ``games`` random games and report counts, rates, mean scores and violations."""
    spec = game_spec(game)
    seat_count = players if players is not None else spec.min_players
    rng = random.Random(seed)
    checker = InvariantChecker() if check_invariants else None
    deal_count = action_count = 0
    score_sums = [0] * seat_count
    started = time.perf_counter()
    for played in range(1, games + 1):
        state, deals, actions = play_random_game(spec, seat_count, options, rng, checker)
        deal_count += deals
        action_count += actions
        for seat, total in enumerate(state.totals):
            score_sums[seat] += total
        if progress is not None:
            progress(played)
    seconds = time.perf_counter() - started
    return {
        "game": spec.name,
        "players": seat_count,
        "games": games,
        "deals": deal_count,
        "actions": action_count,
        "seconds": round(seconds, 3),
        "games_per_s": round(games / seconds, 1) if seconds else None,
        "deals_per_s": round(deal_count / seconds, 1) if seconds else None,
        "actions_per_s": round(action_count / seconds, 1) if seconds else None,
        "mean_final_scores": [round(total / games, 2) for total in score_sums] if games else [],
        "invariant_violations": checker.violations if checker else [],
    }
