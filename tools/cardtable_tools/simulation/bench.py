"""Engine throughput: random playouts per game on one core, against the Hearts yardstick.

The yardstick (``cardtable/bench/yardstick_hearts.py``, :data:`YARDSTICK`) is the cheapest
honest Hearts deal in plain Python, a standalone script kept unchanged so that its figures stay
comparable over time. It runs in the same process run as our measurement, on the same machine,
so the ratio between the two is the figure that means something; absolute rates vary with the
machine's load.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cardtable.engine.registry import game_spec
from cardtable_tools.simulation.playout import play_random_game

#: Each game at its most common table size.
BENCH_GAMES: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("hearts", 4, {"quick": True}),
    ("whist", 4, {}),
    ("358", 3, {}),
    ("belote", 4, {}),
)


def measure_game(
    game: str, players: int, options: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """Random legal playouts of ``game`` for about ``seconds``; deals and actions per second."""
    spec = game_spec(game)
    rng = random.Random(1)
    games = deals = actions = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        _, game_deals, game_actions = play_random_game(spec, players, options, rng)
        games += 1
        deals += game_deals
        actions += game_actions
    elapsed = time.perf_counter() - started
    return {
        "game": game,
        "players": players,
        "games": games,
        "deals_per_s": round(deals / elapsed, 1),
        "actions_per_s": round(actions / elapsed, 1),
    }


#: The Hearts yardstick the engine is measured against, shipped with the package.
YARDSTICK = Path(__file__).resolve().parent.parent / "bench" / "yardstick_hearts.py"


def run_yardstick(path: Path, seconds: float) -> dict[str, float]:
    """Run the yardstick in a child process with the same interpreter; its JSON result."""
    output = subprocess.run(
        [sys.executable, str(path), str(seconds)], check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, float] = json.loads(output)
    return result


#: Interleaved rounds of the games and the yardstick; each one's median round is reported.
ENGINE_BENCH_ROUNDS = 5


def measurement_seconds(seconds: float, yardstick: bool, rounds: int) -> float:
    """How long each game (and the yardstick) is measured in each round, for a run of about
    ``seconds`` in all.

    >>> measurement_seconds(5, yardstick=True, rounds=5)
    0.2
    """
    return seconds / rounds / (len(BENCH_GAMES) + (1 if yardstick else 0))


def engine_bench(
    seconds: float, yardstick: Path | None, rounds: int = ENGINE_BENCH_ROUNDS
) -> dict[str, Any]:
    """Every game's throughput, the yardstick's, and the ratios the targets are stated in.

    ``seconds`` is the whole run's measuring time, shared among the games and the yardstick
    (starting the yardstick's process comes on top). They run in interleaved rounds and each
    one's median round is reported, so a burst of load from another process on a shared
    machine moves every measurement alike instead of skewing whichever one ran during it.
    """
    per_round = measurement_seconds(seconds, yardstick is not None, rounds)
    samples: dict[str, list[dict[str, Any]]] = {game: [] for game, _, _ in BENCH_GAMES}
    yardstick_rounds: list[dict[str, float]] = []
    for _ in range(rounds):
        for game, players, options in BENCH_GAMES:
            samples[game].append(measure_game(game, players, options, per_round))
        if yardstick is not None:
            yardstick_rounds.append(run_yardstick(yardstick, per_round))
    results = []
    for runs in samples.values():
        ordered = sorted(runs, key=lambda run: run["actions_per_s"])
        median = dict(ordered[len(ordered) // 2])
        median["games"] = sum(run["games"] for run in runs)
        median["rounds"] = rounds
        results.append(median)
    hearts = results[0]
    for result in results:
        result["actions_vs_hearts"] = round(result["actions_per_s"] / hearts["actions_per_s"], 3)
    report: dict[str, Any] = {
        "seconds": seconds,
        "seconds_per_measurement": round(per_round, 3),
        "rounds": rounds,
        "games": results,
    }
    if yardstick_rounds:
        ordered_yardstick = sorted(yardstick_rounds, key=lambda run: run["deals_per_s"])
        measured = ordered_yardstick[len(ordered_yardstick) // 2]
        report["yardstick"] = measured
        report["hearts_deals_vs_yardstick"] = round(
            hearts["deals_per_s"] / measured["deals_per_s"], 3
        )
    return report
