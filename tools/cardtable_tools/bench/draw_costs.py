"""What the parts of a weighed world cost, in playout actions: the figures behind the charges
``PLACEMENT_UNITS``, ``HAND_READ_UNITS``, ``PLAY_READ_UNITS`` and ``WORLD_BUILD_UNITS`` in
``bots/beliefs.py``.

    python -m cardtable_tools.bench.draw_costs --positions 40

The search's budget is work, one unit a playout action (``bots/search.py``); a player keeping
its readings (``keep_readings``) is charged for the parts of a world apart: drawing a
placement of the hidden cards, reading one seat's decisions but plays (bids, contract, pass)
on a hand, reading one play on a hand, building the world kept. A charge below what its part
costs would buy the search more CPU than its budget names. For each game this times each part
in CPU time over ``--positions`` card plays with a choice, from rule-based games, and a playout
action there (the keen playout, hard's), and prints one JSON object: per part the
microseconds, the playout actions that is, and the units charged. The times are this
machine's; the ratios are what compare.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from cardtable.bots.beliefs import (
    HAND_READ_UNITS,
    PLACEMENT_UNITS,
    PLAY_READ_UNITS,
    WORLD_BUILD_UNITS,
    card_then_for,
    deal_hands,
    played_by_seat,
    plays_by_seat,
    seat_log_likelihood,
    seat_plays_log_likelihood,
)
from cardtable.bots.determinize import sample_placement
from cardtable.bots.rules import rules_action
from cardtable.bots.search import evaluate, keen_policy
from cardtable.engine.determinize import WorldBuilder, hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.hidden import deal_plays
from cardtable_tools.bench.search_regret import choice_positions
from cardtable_tools.bench.search_speed import PLAYERS

#: Each part is timed this many times a position.
REPEATS = 40


def charges(game: str) -> dict[str, float]:
    """What each part is charged in ``game``, in playout actions."""
    return {
        "placement": PLACEMENT_UNITS,
        "hand_read": HAND_READ_UNITS[game],
        "play_read": PLAY_READ_UNITS,
        "world_build": WORLD_BUILD_UNITS,
    }


def cpu_seconds(work: Callable[[], object], repeats: int) -> float:
    """CPU seconds ``work`` takes, on average over ``repeats`` calls."""
    started = time.process_time()
    for _ in range(repeats):
        work()
    return (time.process_time() - started) / repeats


def time_parts(state: GameState, rng: random.Random) -> dict[str, float]:
    """Seconds of each part of a weighed world, and of a playout action, at ``state``."""
    seat = state.to_act()[0]
    view = state.observation(seat)
    hidden = hidden_cards(view)
    builder = WorldBuilder(view, hidden)
    placements = [sample_placement(hidden, rng) for _ in range(REPEATS)]
    public = builder.build(placements[0])
    plays = deal_plays(view, state.spec.direction)
    played = played_by_seat(plays, state.num_players)
    hands = [deal_hands(hidden, placement, played) for placement in placements]
    others = [other for other in range(state.num_players) if other != seat]
    parts = {
        "placement": cpu_seconds(lambda: sample_placement(hidden, rng), REPEATS),
        "world_build": cpu_seconds(lambda: builder.build(rng.choice(placements)), REPEATS),
    }
    started = time.process_time()
    for deal in hands:
        for other in others:
            seat_log_likelihood(public, seat, other, deal[other])
    parts["hand_read"] = (time.process_time() - started) / (len(hands) * len(others))
    card_then = card_then_for(public)
    by_seat = plays_by_seat(plays, seat)
    count = sum(len(seat_plays) for seat_plays in by_seat.values())
    if card_then is not None and count:
        started = time.process_time()
        for deal in hands:
            for other, seat_plays in by_seat.items():
                seat_plays_log_likelihood(public, sorted(deal[other]), seat_plays, card_then)  # type: ignore[arg-type]
        parts["play_read"] = (time.process_time() - started) / (len(hands) * count)
    action = rules_action(public, seat)
    applied, started = 0, time.process_time()
    for placement in placements:
        applied += evaluate(builder.build(placement), seat, action, keen_policy, rng, True)[1]
    playouts = time.process_time() - started - parts["world_build"] * len(placements)
    parts["action"] = playouts / applied
    return parts


def measure(game: str, positions: int, seed: int, progress: bool = False) -> dict[str, Any]:
    """Each part's mean CPU microseconds over ``positions`` positions of ``game``, in playout
    actions, beside its charge."""
    rng = random.Random(seed)
    totals: dict[str, list[float]] = {}
    states = choice_positions(game, PLAYERS[game], positions, rng)
    for number, state in enumerate(states, start=1):
        for part, seconds in time_parts(state, rng).items():
            totals.setdefault(part, []).append(seconds)
        if progress and number % 10 == 0:
            print(f"draw_costs {game}: {number}/{positions} positions", file=sys.stderr)
    action = sum(totals["action"]) / len(totals["action"])
    report: dict[str, Any] = {
        "game": game,
        "positions": positions,
        "action_us": round(action * 1e6, 2),
    }
    for part, charge in charges(game).items():
        if part not in totals:
            continue  # Belote's plays do not weigh its worlds
        mean = sum(totals[part]) / len(totals[part])
        report[part] = {
            "us": round(mean * 1e6, 2),
            "actions": round(mean / action, 2),
            "charged": charge,
        }
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(PLAYERS))
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    games = args.game or sorted(PLAYERS)
    reports = [measure(game, args.positions, args.seed, progress=True) for game in games]
    print(json.dumps({"games": reports}))


if __name__ == "__main__":
    main()
