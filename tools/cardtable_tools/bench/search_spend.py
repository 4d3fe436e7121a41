"""Where a searching player's work goes: by phase and by the cards the seat holds.

    python -m cardtable_tools.bench.search_spend --game hearts --player hard:budget_ms=50

A player that banks (``adaptive``, the hard level) spends its budget as an average: a clear move
leaves most of it, a close one spends up to a few budgets (``bots/budget.py``). Before changing
how the search weighs some moves, one wants to know what share of the work they take and
whether more would reach them: this plays whole games with ``--player`` at every seat until
it has made ``--moves`` moves with a choice, and groups those moves by phase and cards held.
For each group it gives the moves, their share of all the work, the mean work in ms of budget,
the worlds drawn, the share of the group's work that drawing them took (with the reading of
the others' plays on each, where worlds are weighed), the candidates listed, and how many
moves stopped at their allowance (still undecided when the work ran out) rather than because
one candidate was left. Work is counted,
not timed, so the figures are the same on any machine for a seed.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import WORK_UNITS_PER_MS, SearchStrategy
from cardtable.engine.actions import parse_action
from cardtable.engine.registry import game_spec
from cardtable_tools.bench.search_speed import PLAYERS, measure_games, per_game_parser
from cardtable_tools.player_spec import parse_player

PROGRESS_EVERY = 50


@dataclass(frozen=True)
class SpentMove:
    """One move with a choice: where it was made and what it cost."""

    phase: str
    cards_held: int
    choices: int
    work: int
    worlds: int
    world_work: int
    at_allowance: bool


def allowance(strategy: SearchStrategy, seat: int) -> int:
    """What ``seat``'s next move may spend: its bank's allowance, or the plain budget."""
    return strategy.bank.allowance(seat) if strategy.bank else strategy.work_budget


def play_and_note(
    game: str, player: str, moves: int, seed: int, progress: bool = False
) -> list[SpentMove]:
    """``player`` at every seat of ``game``, one strategy per seat (each its own bank), until
    ``moves`` moves with a choice are made."""
    name, options = parse_player(player)
    spec = game_spec(game)
    players = PLAYERS[game]
    rng = random.Random(seed)
    noted: list[SpentMove] = []
    while len(noted) < moves:
        strategies = [strategy_by_name(name, **options) for _ in range(players)]
        if not isinstance(strategies[0], SearchStrategy):
            raise ValueError(f"{player!r} does not search: there is no work to follow")
        state = spec.new_game(players, None, rng.randrange(players))
        while not state.is_over() and len(noted) < moves:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            strategy = strategies[seat]
            assert isinstance(strategy, SearchStrategy)
            observation = state.observation(seat)
            may_spend = allowance(strategy, seat)
            action = strategy.choose(observation, rng)
            if strategy.last_work:
                noted.append(
                    SpentMove(
                        phase=str(state.phase),
                        cards_held=len(observation.get("hand") or []),
                        choices=len(observation.get("legal_actions") or []),
                        work=strategy.last_work,
                        worlds=strategy.last_worlds,
                        world_work=strategy.last_world_work,
                        at_allowance=strategy.last_work >= may_spend,
                    )
                )
                if progress and len(noted) % PROGRESS_EVERY == 0:
                    print(f"search_spend {game}: {len(noted)}/{moves} moves", file=sys.stderr)
            state.apply(seat, parse_action(action))
    return noted


def spend_by_group(noted: Sequence[SpentMove]) -> list[dict[str, Any]]:
    """The moves grouped by phase and cards held: phases in the order they first came up, and
    in each the fullest hands first, as a deal goes."""
    groups: dict[tuple[str, int], list[SpentMove]] = defaultdict(list)
    phases: dict[str, int] = {}
    for move in noted:
        phases.setdefault(move.phase, len(phases))
        groups[(move.phase, move.cards_held)].append(move)
    total = sum(move.work for move in noted) or 1
    rows = []
    for (phase, held), moves in sorted(
        groups.items(), key=lambda kv: (phases[kv[0][0]], -kv[0][1])
    ):
        work = [move.work for move in moves]
        rows.append(
            {
                "phase": phase,
                "cards_held": held,
                "moves": len(moves),
                "work_share": round(sum(work) / total, 3),
                "mean_work_ms": round(statistics.fmean(work) / WORK_UNITS_PER_MS, 1),
                "mean_worlds": round(statistics.fmean(move.worlds for move in moves), 1),
                # Drawing worlds and reading the others' plays on them, against playing them out.
                "worlds_share": round(sum(move.world_work for move in moves) / (sum(work) or 1), 3),
                # A set of cards to choose lists no actions: its candidates are the search's own.
                "mean_choices": round(statistics.fmean(move.choices for move in moves), 1),
                "at_allowance": sum(move.at_allowance for move in moves),
            }
        )
    return rows


def measure_spend(
    game: str, player: str, moves: int, seed: int, progress: bool = False
) -> dict[str, Any]:
    """The report of one game: the moves, their mean work, and the groups."""
    noted = play_and_note(game, player, moves, seed, progress)
    return {
        "game": game,
        "moves": len(noted),
        "mean_work_ms": round(statistics.fmean(m.work for m in noted) / WORK_UNITS_PER_MS, 1),
        "worlds_share": round(
            sum(move.world_work for move in noted) / (sum(move.work for move in noted) or 1), 3
        ),
        "at_allowance": sum(move.at_allowance for move in noted),
        "groups": spend_by_group(noted),
    }


def spend_table(report: dict[str, Any]) -> Table:
    """One game's groups as a table for people."""
    table = Table(
        title=f"{report['game']}: {report['moves']} moves, {report['mean_work_ms']} ms a move,"
        f" {report['worlds_share']:.0%} of the work on drawing worlds",
        title_justify="left",
    )
    for heading in ("phase", "cards held", "moves", "share of work", "ms a move", "worlds",
                    "on worlds", "choices", "at allowance"):  # fmt: skip
        table.add_column(heading, justify="left" if heading == "phase" else "right")
    for row in report["groups"]:
        table.add_row(
            row["phase"],
            str(row["cards_held"]),
            str(row["moves"]),
            f"{row['work_share']:.1%}",
            f"{row['mean_work_ms']:.1f}",
            f"{row['mean_worlds']:.1f}",
            f"{row['worlds_share']:.0%}",
            f"{row['mean_choices']:.1f}" if row["mean_choices"] else "a set",
            f"{row['at_allowance']} of {row['moves']}",
        )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = per_game_parser("search_spend", __doc__.split("\n")[0], "hard:budget_ms=50", 300)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    games = measure_games(parser, args, measure_spend)
    if args.json:
        print(json.dumps({"player": args.player, "games": games}))
    else:
        console = Console()
        for report in games:
            console.print(spend_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
