"""``cardtable simulate`` and ``cardtable record``: random games, engine only."""

from __future__ import annotations

import argparse
import json
import sys

from cardtable.cli.console import parse_options, report_console
from cardtable.cli.progress import WorkProgress
from cardtable.cli.subcommands import Subcommands
from cardtable.engine.record import dumps_record
from cardtable.engine.registry import GAMES, game_spec
from cardtable_tools.simulation.records import record_random_game
from cardtable_tools.simulation.simulate import simulate


def cmd_simulate(args: argparse.Namespace) -> int:
    console = report_console()
    with WorkProgress(f"simulate {args.game}", console, unit="games") as progress:
        progress.start(args.games)
        result = simulate(
            args.game,
            args.players,
            args.games,
            args.seed,
            parse_options(args.option),
            progress=progress.update,
        )
    print(json.dumps(result))
    return 1 if result["invariant_violations"] else 0


def cmd_record(args: argparse.Namespace) -> int:
    spec = game_spec(args.game)
    record = record_random_game(
        spec.name,
        args.players or spec.min_players,
        parse_options(args.option),
        args.seed,
        shuffle_proofs=args.with_shuffle_proofs,
    )
    proofs = " --with-shuffle-proofs" if args.with_shuffle_proofs else ""
    record["generated_by"] = f"cardtable record --game {spec.name} --seed {args.seed}{proofs}"
    sys.stdout.write(dumps_record(record))
    return 0


def register(commands: Subcommands) -> None:
    """Add ``simulate`` and ``record``."""
    games = sorted(GAMES)
    sim = commands.add_parser("simulate", help="play random games, engine only; print JSON")
    sim.add_argument("--game", required=True, choices=games)
    sim.add_argument("--players", type=int)
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    sim.set_defaults(handler=cmd_simulate)

    rec = commands.add_parser("record", help="play one random game and print its record")
    rec.add_argument("--game", required=True, choices=games)
    rec.add_argument("--players", type=int)
    rec.add_argument("--seed", type=int, default=1)
    rec.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    rec.add_argument(
        "--with-shuffle-proofs",
        action="store_true",
        help="derive each deck from a seed and record its commitment and seed",
    )
    rec.set_defaults(handler=cmd_record)
