"""``cardtable``: the command line for simulation, records, benchmarks and operations.

Each subcommand is a small function that parses nothing itself: argparse builds the
arguments, the function calls the library and prints. Machine output is JSON on stdout;
progress and tables for people go to stderr through rich, so pipes stay clean.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from cardtable.engine.errors import EngineError
from cardtable.engine.record import RecordBuilder, dumps_record, load_record, verify_record
from cardtable.engine.registry import GAMES, game_spec
from cardtable.simulation.bench import engine_bench, find_yardstick
from cardtable.simulation.playout import random_action, shuffled_deck
from cardtable.simulation.simulate import simulate


def _options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator:
            raise argparse.ArgumentTypeError(f"--option takes key=value, not {pair!r}")
        options[key.strip()] = value.strip()
    return options


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def cmd_simulate(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    with _progress(console) as progress:
        task = progress.add_task(f"simulating {args.game}", total=args.games)
        result = simulate(
            args.game,
            args.players,
            args.games,
            args.seed,
            _options(args.option),
            progress=lambda done: progress.update(task, completed=done),
        )
    print(json.dumps(result))
    return 1 if result["invariant_violations"] else 0


def cmd_record(args: argparse.Namespace) -> int:
    import random

    spec = game_spec(args.game)
    players = args.players or spec.min_players
    rng = random.Random(args.seed)
    builder = RecordBuilder.start(spec, players, _options(args.option), rng.randrange(players))
    state = builder.state
    while not state.is_over():
        if state.needs_deal():
            builder.deal(shuffled_deck(state, rng))
            continue
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        builder.act(seat, str(random_action(state, seat, rng)))
    builder.extra["generated_by"] = f"cardtable record --game {spec.name} --seed {args.seed}"
    sys.stdout.write(dumps_record(builder.to_json()))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    console = Console()
    try:
        data = json.loads(Path(args.file).read_text())
        record = load_record(data)
    except (OSError, json.JSONDecodeError, EngineError) as error:
        console.print(f"[red]cannot read {args.file}:[/red] {error}")
        return 2
    report = verify_record(record)
    table = Table(title=f"{record.spec.title}, {record.players} players")
    table.add_column("deal", justify="right")
    for seat in range(record.players):
        table.add_column(f"seat {seat}", justify="right")
    running = [0] * record.players
    for number, scores in report.deal_scores:
        if scores is None:
            table.add_row(str(number), *(["-"] * record.players))
            continue
        running = [total + score for total, score in zip(running, scores, strict=True)]
        cells = [f"{score:+d} ({total})" for score, total in zip(scores, running, strict=True)]
        table.add_row(str(number), *cells)
    console.print(table)
    if not report.ok:
        where = f"deal {report.problem_deal}" if report.problem_deal else "the result"
        action = f", {report.problem_action}" if report.problem_action else ""
        console.print(f"[red]FAILED[/red] at {where}{action}: {report.problem}")
        return 1
    console.print(f"final totals {list(report.totals)}, places {list(report.places)}")
    console.print("[green]OK[/green]: every action is legal and every result matches")
    return 0


def cmd_bench_engine(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    yardstick = Path(args.yardstick) if args.yardstick else find_yardstick(Path.cwd())
    if yardstick is None:
        console.print("yardstick not found (pass --yardstick PATH); measuring without it")
    console.print(f"measuring each game for {args.seconds} s on one core ...")
    report = engine_bench(args.seconds, yardstick)
    table = Table(title="engine random playouts, one core")
    for column in ("game", "players", "deals/s", "actions/s", "actions vs Hearts"):
        table.add_column(column, justify="right")
    for result in report["games"]:
        table.add_row(
            result["game"],
            str(result["players"]),
            f"{result['deals_per_s']:,.0f}",
            f"{result['actions_per_s']:,.0f}",
            f"{result['actions_vs_hearts']:.2f}",
        )
    console.print(table)
    if "yardstick" in report:
        console.print(
            f"yardstick: {report['yardstick']['deals_per_s']:,.0f} Hearts deals/s; "
            f"engine Hearts / yardstick = {report['hearts_deals_vs_yardstick']:.2f} "
            "(target >= 0.33)"
        )
    print(json.dumps(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardtable", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
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
    rec.set_defaults(handler=cmd_record)

    ver = commands.add_parser("verify", help="replay a record and check every action and score")
    ver.add_argument("file")
    ver.set_defaults(handler=cmd_verify)

    bench = commands.add_parser("bench-engine", help="engine playout throughput vs the yardstick")
    bench.add_argument("--seconds", type=float, default=3.0)
    bench.add_argument("--yardstick", help="path to shared/bench/yardstick_hearts.py")
    bench.set_defaults(handler=cmd_bench_engine)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: Any = args.handler(args)
    except EngineError as error:
        Console(stderr=True).print(f"[red]error:[/red] {error}")
        return 2
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
