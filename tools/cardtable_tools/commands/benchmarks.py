"""``cardtable bench-engine``, ``bench`` (and ``bench --faults``), ``bench-floor`` and
``bench-scoring``: the benchmarks, each printing its figures for people and as JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table
from rich.text import Text

from cardtable.cli.console import report_console
from cardtable.cli.progress import WorkProgress
from cardtable.cli.subcommands import Subcommands
from cardtable.platform.entrypoint import run_async
from cardtable.platform.memory import garbage_collector_tuned
from cardtable_tools.bench.table_load import CLIENT_MODELS
from cardtable_tools.simulation.bench import (
    BENCH_GAMES,
    ENGINE_BENCH_ROUNDS,
    YARDSTICK,
    engine_bench,
    measurement_seconds,
)


def cmd_bench_engine(args: argparse.Namespace) -> int:
    console = report_console()
    yardstick = Path(args.yardstick) if args.yardstick else YARDSTICK
    if not yardstick.is_file():
        console.print(Text(f"no yardstick at {yardstick}", "red"))
        return 2
    each = measurement_seconds(args.seconds, yardstick=True, rounds=ENGINE_BENCH_ROUNDS)
    console.print(
        f"measuring for about {args.seconds:g} s in all on one core: {ENGINE_BENCH_ROUNDS} "
        f"rounds of {len(BENCH_GAMES)} games and the yardstick, {each:.2g} s each ..."
    )
    report = engine_bench(args.seconds, yardstick, rounds=ENGINE_BENCH_ROUNDS)
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


def _bench_faults(args: argparse.Namespace) -> int:
    """``bench --faults``: kill and restart each service and server while games run."""
    from cardtable_tools.bench.fault_report import render_fault_report
    from cardtable_tools.bench.faults import run_faults

    console = report_console()
    report = run_async(
        run_faults(
            tables=args.fault_tables,
            rounds=args.rounds,
            pause_seconds=args.pause_seconds,
            progress=console.print,
            log_dir=Path(args.log_dir) if args.log_dir else None,
            nats_cluster=args.nats_cluster,
        )
    )
    console.print(render_fault_report(report))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "faults.json").write_text(json.dumps(report.as_dict(), indent=1))
    console.print(f"results: {out / 'faults.json'}")
    print(json.dumps(report.as_dict()))
    return 0 if report.ok else 1


def cmd_bench(args: argparse.Namespace) -> int:
    """The whole system under load (or, with ``--faults``, under faults); JSON and a chart."""
    if args.faults:
        return _bench_faults(args)
    from cardtable_tools.bench.chart import draw_chart
    from cardtable_tools.bench.quota_sides import parse_sides
    from cardtable_tools.bench.render import render_system_report
    from cardtable_tools.bench.system import system_bench

    console = report_console()
    counts = [int(count) for count in args.tables.split(",") if count.strip()]
    try:
        quotas = parse_sides(args.quotas)
    except ValueError as error:
        console.print(f"[red]{error}[/red]")
        return 2
    with (
        garbage_collector_tuned(),  # the clients' pauses would count as move latency
        WorkProgress("bench", console, unit="s measured") as progress,
    ):
        report = run_async(
            system_bench(
                counts,
                args.seconds,
                console.print,
                raw_seconds=args.raw_seconds,
                paced=not args.no_paced,
                clients=args.clients,
                table_path=args.table_path,
                floor=not args.no_floor,
                quotas=quotas,
                measured=progress.update,
                profile_dir=Path(args.profile) if args.profile else None,
            )
        )
    console.print(render_system_report(report))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(report, indent=1))
    chart = draw_chart(report, out / "bench.png")
    console.print(f"results: {out / 'bench.json'}, chart: {chart}")
    print(json.dumps(report))
    return 0


def cmd_bench_floor(args: argparse.Namespace) -> int:
    """The move floor with stand-in work per move: where each latency target stops holding."""
    from cardtable_tools.bench.floor_budget import floor_budget
    from cardtable_tools.bench.render import render_floor_budget

    console = report_console()
    with garbage_collector_tuned():  # as in cmd_bench: the clients measure the latency
        report = run_async(
            floor_budget(
                args.tables,
                args.seconds,
                [float(rate) for rate in args.rates.split(",")],
                [float(work) for work in args.work_us.split(",")],
                console.print,
            )
        )
    console.print(render_floor_budget(report))
    print(json.dumps(report))
    return 0


def cmd_bench_scoring(args: argparse.Namespace) -> int:
    """Projection and rebuild rates beside plain batched inserts, on a generated log; then the
    scoring service's projection lag at a paced load (issue #5's target)."""
    from cardtable_tools.bench.scoring_rates import format_report, scoring_rates

    console = report_console()
    with WorkProgress("bench-scoring", console) as progress:

        def advance(step: str, done: int, total: int) -> None:
            progress.update(done, total, step)

        figures = run_async(
            scoring_rates(
                games=args.games,
                progress=advance,
                quick=not args.full,
                lag_rate=args.lag_rate,
                lag_seconds=args.lag_seconds,
            )
        )
    console.print(format_report(figures))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(figures, indent=1))
    print(json.dumps(figures))
    return 0


def register(commands: Subcommands) -> None:
    """Add the benchmark commands."""
    bench = commands.add_parser("bench-engine", help="engine playout throughput vs the yardstick")
    bench.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="the whole run, shared among the games and the yardstick (default: 10)",
    )
    bench.add_argument(
        "--yardstick",
        help="another yardstick script to compare against (default: the Hearts yardstick in "
        "cardtable/bench/yardstick_hearts.py)",
    )
    bench.set_defaults(handler=cmd_bench_engine)

    system_bench_parser = commands.add_parser(
        "bench",
        help="the whole system under load beside the raw limits (or --faults); JSON + PNG",
    )
    system_bench_parser.add_argument(
        "--tables", default="10,20,40", help="comma-separated table counts, one load each"
    )
    system_bench_parser.add_argument("--seconds", type=float, default=15.0, help="per load")
    system_bench_parser.add_argument(
        "--raw-seconds", type=float, default=3.0, help="per raw-limit measurement"
    )
    system_bench_parser.add_argument(
        "--no-paced",
        action="store_true",
        help="skip the runs paced to the target rate and half of it (latency targets)",
    )
    system_bench_parser.add_argument(
        "--clients",
        choices=CLIENT_MODELS,
        default="pipeline",
        help=(
            "how clients play: GetTable before each move (poll), the same over one "
            "Pipeline stream for all players (pipeline), or told by WatchTurns (turns)"
        ),
    )
    system_bench_parser.add_argument(
        "--table-path",
        action="store_true",
        help=(
            "run only NATS, the rules and table services and the clients (issue #4's "
            "setup): no scoring service, PostgreSQL or bots, so no projection lag"
        ),
    )
    system_bench_parser.add_argument(
        "--no-floor",
        action="store_true",
        help=(
            "skip the move floor: the same hops as a move (client, table, rules, JetStream) "
            "with nothing of ours in them, measured at the best load's tables and rates"
        ),
    )
    system_bench_parser.add_argument(
        "--quotas",
        default="on",
        help=(
            "the table service's quotas: on, off, or on,off to play each load on both sides "
            "(a freshly started table service each) and compare their CPU per move"
        ),
    )
    system_bench_parser.add_argument(
        "--profile",
        metavar="DIR",
        help=(
            "sample every service with py-spy during each unpaced load: collapsed stacks in "
            "DIR, each service's busiest functions in the report"
        ),
    )
    system_bench_parser.add_argument("--out", default="bench-results", help="directory")
    system_bench_parser.add_argument(
        "--faults", action="store_true", help="kill and restart services and servers instead"
    )
    system_bench_parser.add_argument(
        "--rounds", type=int, default=3, help="with --faults: rounds of all five faults"
    )
    system_bench_parser.add_argument(
        "--fault-tables", type=int, default=20, help="with --faults: tables played meanwhile"
    )
    system_bench_parser.add_argument(
        "--pause-seconds", type=float, default=5.0, help="with --faults: play between faults"
    )
    system_bench_parser.add_argument(
        "--log-dir",
        default="",
        help="with --faults: keep the services' logs here (default: a temporary directory)",
    )
    system_bench_parser.add_argument(
        "--nats-cluster",
        type=int,
        default=1,
        choices=(1, 3),
        help="with --faults: 3 runs NATS as a cluster and kills or pauses its leaders instead",
    )
    system_bench_parser.set_defaults(handler=cmd_bench)

    floor_bench = commands.add_parser(
        "bench-floor",
        help="a move's hops with nothing of ours, plus stand-in work: room under the targets",
    )
    floor_bench.add_argument("--tables", type=int, default=40)
    floor_bench.add_argument("--seconds", type=float, default=20.0, help="per run")
    floor_bench.add_argument("--rates", default="500,1000", help="moves/s offered, comma-separated")
    floor_bench.add_argument(
        "--work-us",
        default="0,300,600,900,1200",
        help="stand-in CPU work per move in microseconds, comma-separated steps",
    )
    floor_bench.set_defaults(handler=cmd_bench_floor)

    scoring_bench = commands.add_parser(
        "bench-scoring",
        help="projection and rebuild rates beside plain batched inserts; lag at a paced load",
    )
    scoring_bench.add_argument("--games", type=int, default=10_000)
    scoring_bench.add_argument(
        "--full", action="store_true", help="all four games in equal numbers, full length"
    )
    scoring_bench.add_argument(
        "--lag-rate",
        type=float,
        default=1000.0,
        help="messages/s appended while the scoring service's projection lag is measured",
    )
    scoring_bench.add_argument(
        "--lag-seconds",
        type=float,
        default=30.0,
        help="how long to append at --lag-rate (0 skips the lag measurement)",
    )
    scoring_bench.add_argument("--json-out", help="also write the figures to this file")
    scoring_bench.set_defaults(handler=cmd_bench_scoring)
