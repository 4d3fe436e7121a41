"""How fast a searching player does its work here: the rate ``WORK_UNITS_PER_MS`` stands for.

    python -m cardtable_tools.bench.search_speed --player normal --moves 200

The search's budget is work (``bots/search.py``: a unit is a playout action, a drawn world
costs a fixed number), so a player's strength does not depend on the machine, but the time it
takes does. For each game this plays whole games with ``--player`` (a strategy or level, with
options as ``name:key=value``) at every seat until it has made ``--moves`` moves with a choice,
each timed in CPU time, and prints one JSON object: per game the moves, the work done, the
work per CPU millisecond (against ``WORK_UNITS_PER_MS``) and a move's CPU milliseconds
(median and 90th percentile). The work is the same on any machine for a seed; the times are
this machine's, so compare them on one machine, quiet.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import WORK_UNITS_PER_MS, SearchStrategy
from cardtable.engine.actions import parse_action
from cardtable.engine.registry import game_spec
from cardtable_tools.player_spec import parse_player

#: Each game at its usual table.
PLAYERS = {"whist": 4, "358": 3, "belote": 4, "hearts": 4}


def measure_speed(
    game: str, player: str, moves: int, seed: int, progress: bool = False
) -> dict[str, Any]:
    """``player`` at every seat of ``game`` until ``moves`` moves with a choice are made."""
    name, options = parse_player(player)
    strategy = strategy_by_name(name, **options)
    if not isinstance(strategy, SearchStrategy):
        raise ValueError(f"{player!r} does not search: there is no work to time")
    spec = game_spec(game)
    players = PLAYERS[game]
    rng = random.Random(seed)
    seconds: list[float] = []
    work = 0
    while len(seconds) < moves:
        state = spec.new_game(players, None, rng.randrange(players))
        while not state.is_over() and len(seconds) < moves:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            observation = state.observation(seat)
            started = time.process_time()
            action = strategy.choose(observation, rng)
            spent = time.process_time() - started
            if strategy.last_work:
                seconds.append(spent)
                work += strategy.last_work
                if progress and len(seconds) % 50 == 0:
                    print(f"search_speed {game}: {len(seconds)}/{moves} moves", file=sys.stderr)
            state.apply(seat, parse_action(action))
    total_ms = 1000 * sum(seconds)
    deciles = statistics.quantiles(seconds, n=10) if len(seconds) > 1 else seconds * 9
    return {
        "game": game,
        "moves": len(seconds),
        "work_units": work,
        "units_per_cpu_ms": round(work / max(total_ms, 1e-9), 1),
        "against_work_units_per_ms": round(work / max(total_ms, 1e-9) / WORK_UNITS_PER_MS, 3),
        "move_cpu_ms_median": round(1000 * statistics.median(seconds), 2),
        "move_cpu_ms_p90": round(1000 * deciles[8], 2),
    }


def per_game_parser(
    prog: str, description: str, player: str, moves: int
) -> argparse.ArgumentParser:
    """The options of a bench that plays a searching ``--player`` in each ``--game`` until it
    has made ``--moves`` moves with a choice."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--player", default=player, help="e.g. normal, hard:budget_ms=50")
    parser.add_argument("--game", action="append", choices=sorted(PLAYERS))
    parser.add_argument("--moves", type=int, default=moves)
    parser.add_argument("--seed", type=int, default=1)
    return parser


def measure_games(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    measure: Callable[[str, str, int, int, bool], dict[str, Any]],
) -> list[dict[str, Any]]:
    """``measure`` of each game asked for (all four by default), a bad option refused."""
    if args.moves < 1:
        parser.error("--moves must be at least 1")
    try:
        return [
            measure(game, args.player, args.moves, args.seed, True)
            for game in args.game or list(PLAYERS)
        ]
    except ValueError as error:
        parser.error(str(error))


def main(argv: list[str] | None = None) -> int:
    parser = per_game_parser("search_speed", __doc__.split("\n")[0], "normal", 200)
    args = parser.parse_args(argv)
    games = measure_games(parser, args, measure_speed)
    print(json.dumps({"player": args.player, "games": games}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
