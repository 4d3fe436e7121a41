"""``cardtable``: the command line for simulation, records, benchmarks and operations.

Each subcommand is a small function that parses nothing itself: argparse builds the
arguments, the function calls the library and prints. Machine output is JSON on stdout;
progress and tables for people go to stderr through rich, so pipes stay clean.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cardtable.bench.table_load import CLIENT_MODELS
from cardtable.cli import call, token
from cardtable.cli.progress import WorkProgress, duration_text, rate_text
from cardtable.engine.errors import EngineError
from cardtable.engine.record import GameRecord, dumps_record, load_record, verify_record
from cardtable.engine.registry import GAMES, game_spec
from cardtable.platform.entrypoint import run_async
from cardtable.platform.memory import garbage_collector_tuned
from cardtable.replay.audit import PASSED, AuditReport, audit_record
from cardtable.replay.html import html_request_problem, viewer_html
from cardtable.replay.render import render_audit
from cardtable.replay.session import ReplayError, Viewpoint
from cardtable.replay.show import Pause, replay_request_problem, show_replay
from cardtable.simulation.bench import (
    BENCH_GAMES,
    ENGINE_BENCH_ROUNDS,
    YARDSTICK,
    engine_bench,
    measurement_seconds,
)
from cardtable.simulation.records import record_random_game
from cardtable.simulation.simulate import simulate

REPORT_WIDTH = 120  # columns for tables written to a file or a pipe


def _console(stderr: bool = True) -> Console:
    """A console for reports: a terminal's own width, else ``REPORT_WIDTH`` columns.

    Rich falls back to 80 columns when its output is not a terminal, which cut the bench's
    table headings to "move…"; ``COLUMNS`` still decides where it is set.
    """
    console = Console(stderr=stderr)
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    return Console(stderr=stderr, width=REPORT_WIDTH)


def _options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator:
            raise argparse.ArgumentTypeError(f"--option takes key=value, not {pair!r}")
        options[key.strip()] = value.strip()
    return options


def cmd_simulate(args: argparse.Namespace) -> int:
    console = _console()
    with WorkProgress(f"simulate {args.game}", console, unit="games") as progress:
        progress.start(args.games)
        result = simulate(
            args.game,
            args.players,
            args.games,
            args.seed,
            _options(args.option),
            progress=progress.update,
        )
    print(json.dumps(result))
    return 1 if result["invariant_violations"] else 0


def cmd_record(args: argparse.Namespace) -> int:
    spec = game_spec(args.game)
    record = record_random_game(
        spec.name,
        args.players or spec.min_players,
        _options(args.option),
        args.seed,
        shuffle_proofs=args.with_shuffle_proofs,
    )
    proofs = " --with-shuffle-proofs" if args.with_shuffle_proofs else ""
    record["generated_by"] = f"cardtable record --game {spec.name} --seed {args.seed}{proofs}"
    sys.stdout.write(dumps_record(record))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    console = _console(stderr=False)
    data = _read_json(args.file, console)
    if data is None:
        return 2
    try:
        record = load_record(data)
    except EngineError as error:
        console.print(Text.assemble(("cannot read ", "red"), (args.file, "red"), f": {error}"))
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


def _read_json(path: str, console: Console) -> Any:
    """The file's JSON, or ``None`` after saying why it cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, not JSON, too long a number
        console.print(Text.assemble(("cannot read ", "red"), (path, "red"), f": {error}"))
    except RecursionError:
        console.print(Text.assemble(("cannot read ", "red"), (path, "red"), ": nested too deeply"))
    return None


def _ask(console: Console, prompt: str) -> str:
    return console.input(Text(prompt, style="dim"))


def _record_of(args: argparse.Namespace, console: Console) -> dict[str, Any] | None:
    """The record named on the command line: a file, or a table's log exported on the fly."""
    if args.file:
        data = _read_json(args.file, console)
        if data is not None and not isinstance(data, dict):
            console.print(
                Text.assemble(
                    ("cannot read ", "red"), (args.file, "red"), ": a game record is a JSON object"
                )
            )
        return data if isinstance(data, dict) else None
    from cardtable.eventlog.reader import log_reader
    from cardtable.eventlog.records import record_from_batches

    async def fetch() -> dict[str, Any]:
        async with log_reader() as reader:
            batches = await reader.table(args.table_id)
        if not batches:
            raise LookupError(f"no table {args.table_id} in the event log")
        return record_from_batches(args.table_id, [stored.batch for stored in batches])

    try:
        return asyncio.run(fetch())
    except (RuntimeError, LookupError, TimeoutError) as error:
        console.print(Text(str(error), style="red"))
        return None


def cmd_replay(args: argparse.Namespace) -> int:
    console = _console(stderr=False)
    data = _record_of(args, console)
    if data is None:
        return 2
    try:
        record = load_record(data)
    except EngineError as error:
        console.print(Text.assemble(("not a game record: ", "red"), str(error)))
        return 2
    viewpoint = Viewpoint(seat=args.seat, open=args.open)
    problem = replay_request_problem(record, viewpoint, args.deal)
    if problem:
        console.print(Text(problem, style="red"))
        return 2
    if args.html:
        return _write_replay_html(args, record, viewpoint, console)
    pause: Pause | None = None
    if args.step and sys.stdin.isatty() and console.is_terminal:
        pause = partial(_ask, console)
    try:
        show_replay(record, viewpoint, console, deal=args.deal, pause=pause)
    except ReplayError as error:
        console.print(
            Text.assemble(
                ("the record stops following the rules at ", "red"),
                str(error),
                " (run cardtable audit for the full check)",
            )
        )
        return 1
    return 0


def _write_replay_html(
    args: argparse.Namespace, record: GameRecord, viewpoint: Viewpoint, console: Console
) -> int:
    """``replay --html FILE``: the game as one self-contained page (replay/html.py)."""
    problem = "--step pauses a terminal; the page steps by itself" if args.step else None
    problem = problem or html_request_problem(record, viewpoint)
    if problem:
        console.print(Text(problem, style="red"))
        return 2
    page = viewer_html(record, viewpoint, deal=args.deal)
    Path(args.html).write_text(page.html, encoding="utf-8")
    console.print(Text(f"wrote {args.html} ({viewpoint.describe()}): open it in a browser"))
    if page.stopped:
        console.print(Text(f"the record stops following the rules at {page.stopped}", "red"))
        return 1
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    console = _console(stderr=False)
    if args.table_id:
        return _audit_table(args, console)
    data = _read_json(args.file, console)
    if data is None:
        return 2
    report = audit_record(data, require_shuffle_proofs=args.require_shuffle_proofs)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        for line in render_audit(report, args.file):
            console.print(line)
    return 0 if report.ok else 1


def _audit_table(args: argparse.Namespace, console: Console) -> int:
    import os

    from cardtable.eventlog.audit import LOG, SIGNATURES, audit_log
    from cardtable.eventlog.reader import log_reader, verifying_keys
    from cardtable.platform.log_signing import LogKeyError

    async def fetch() -> Any:
        verifier = await verifying_keys(os.environ)
        async with log_reader() as reader:
            return await reader.table(args.table_id), await reader.signed_from(), verifier

    try:
        batches, signed_from, verifier = asyncio.run(fetch())
    except (RuntimeError, TimeoutError, LogKeyError) as error:
        console.print(Text(str(error), style="red"))
        return 2
    report = audit_log(args.table_id, batches, verifier=verifier, signed_from=signed_from)
    if args.json:
        print(json.dumps(report.to_json()))
        return 0 if report.ok else 1
    if not batches:
        console.print(Text(f"no table {args.table_id} in the event log", "red"))
        return 1
    log_checks = [
        _log_check(report, SIGNATURES, "; ".join(report.notes) or "no batches"),
        _log_check(
            report,
            LOG,
            f"{len(batches)} batches, versions 1..{len(batches)} with no gap or duplicate",
        ),
    ]
    for line in render_audit(report, f"the log of table {args.table_id}", log_checks):
        console.print(line)
    return 0 if report.ok else 1


def _log_check(report: AuditReport, check: str, passed: str) -> tuple[str, bool, str]:
    """A check of a table's log for ``render_audit``: ``passed`` says what it found, or the
    first problem it found (the others are listed below when there are several)."""
    if report.checks.get(check) == PASSED:
        return check, True, passed
    problems = [problem for problem in report.problems if problem.check == check]
    more = f" (and {len(problems) - 1} more, below)" if len(problems) > 1 else ""
    return check, False, f"{problems[0]}{more}"


def cmd_export(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from cardtable.eventlog.reader import log_reader
    from cardtable.eventlog.records import record_from_batches

    console = _console()
    since = 0.0
    if args.since:
        try:
            since = datetime.fromisoformat(args.since).replace(tzinfo=UTC).timestamp()
        except ValueError:
            console.print(Text(f"--since takes a date like 2026-11-29, not {args.since!r}", "red"))
            return 2

    async def export() -> int:
        async with log_reader() as reader:
            if not args.all:
                batches = await reader.table(args.table_id)
                if not batches:
                    console.print(Text(f"no table {args.table_id} in the event log", "red"))
                    return 1
                text = dumps_record(record_from_batches(args.table_id, [b.batch for b in batches]))
                if args.out:
                    await asyncio.to_thread(Path(args.out).write_text, text)
                else:
                    sys.stdout.write(text)
                return 0
            folder = Path(args.out or "exported")
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            table_ids = await reader.table_ids()
            written = 0
            with WorkProgress("export", console, unit="tables") as progress:
                progress.start(len(table_ids))
                for table_id in table_ids:
                    table_log = [stored.batch for stored in await reader.table(table_id)]
                    progress.advance()
                    created = table_log[0].occurred_at.seconds if table_log else 0
                    record = record_from_batches(table_id, table_log)
                    if created < since or not record["result"]["over"]:
                        continue
                    target = folder / f"{table_id}.json"
                    await asyncio.to_thread(target.write_text, dumps_record(record))
                    written += 1
            console.print(f"{written} finished games written to {folder}/")
            return 0

    try:
        return asyncio.run(export())
    except (RuntimeError, TimeoutError) as error:
        console.print(Text(str(error), style="red"))
        return 2


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Rebuild the scoring projection from the whole log, then compare it with the live one."""
    import os

    from cardtable.eventlog.audit import NO_KEYS
    from cardtable.eventlog.reader import log_reader, verifying_keys
    from cardtable.platform.log_names import LogNames
    from cardtable.scoring_service.database import create_schema_pool
    from cardtable.scoring_service.rebuild import RebuildProgress, compare_projections, rebuild

    console = _console()
    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        console.print(Text("set DATABASE_URL (and NATS_URL) to rebuild the projection", "red"))
        return 2
    names = LogNames.from_prefix(os.environ.get("EVENT_PREFIX", "cardtable"))

    async def work() -> int:
        verifier = await verifying_keys(os.environ)
        if verifier is None:
            console.print(Text(NO_KEYS, "red"))
            return 2
        async with log_reader() as reader:
            with WorkProgress(f"rebuild into {args.schema}", console, unit="messages") as progress:
                progress.start()

                def report(step: RebuildProgress) -> None:
                    progress.update(step.position, step.last_sequence)

                result = await rebuild(
                    database_url,
                    reader.connection.jetstream,
                    names,
                    schema=args.schema,
                    on_progress=report,
                    # a second process reads the log while this one projects
                    reader_nats_url=os.environ.get("NATS_URL"),
                    verifier=verifier,
                )
        console.print(
            f"rebuilt {result.messages:,} messages ({result.events:,} events) into "
            f"{result.schema} in {result.seconds:.1f} s: {result.events_per_second:,.0f} "
            f"events/s, {result.dead_letters} dead letters"
        )
        if not args.compare_with:
            return 0
        pool = await create_schema_pool(database_url, args.schema, max_size=1)
        try:
            async with pool.acquire() as connection:
                comparisons = await compare_projections(connection, args.compare_with, args.schema)
        finally:
            await pool.close()
        table = Table(title=f"{args.compare_with} (live) against {args.schema} (rebuilt)")
        for column in ("table", "live rows", "rebuilt rows", "only live", "only rebuilt"):
            table.add_column(column, justify="right")
        for item in comparisons:
            table.add_row(
                item.table,
                f"{item.rows_in_first:,}",
                f"{item.rows_in_second:,}",
                str(item.only_in_first),
                str(item.only_in_second),
                style=None if item.identical else "red",
            )
        console.print(table)
        differing = [item for item in comparisons if not item.identical]
        for item in differing:
            for example in item.examples:
                console.print(Text(f"  {item.table}: {example}", "red"))
        console.print(
            Text("identical, row for row", "green")
            if not differing
            else Text(f"{len(differing)} tables differ", "red")
        )
        return 0 if not differing else 1

    try:
        return asyncio.run(work())
    except (RuntimeError, TimeoutError, ValueError) as error:
        console.print(Text(str(error), "red"))
        return 2


def cmd_bench_engine(args: argparse.Namespace) -> int:
    console = _console()
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
    from cardtable.bench.fault_report import render_fault_report
    from cardtable.bench.faults import run_faults

    console = _console()
    report = run_async(
        run_faults(
            tables=args.fault_tables,
            rounds=args.rounds,
            pause_seconds=args.pause_seconds,
            progress=console.print,
            log_dir=Path(args.log_dir) if args.log_dir else None,
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
    from cardtable.bench.chart import draw_chart
    from cardtable.bench.quota_sides import parse_sides
    from cardtable.bench.render import render_system_report
    from cardtable.bench.system import system_bench

    console = _console()
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
    from cardtable.bench.floor_budget import floor_budget
    from cardtable.bench.render import render_floor_budget

    console = _console()
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
    from cardtable.bench.scoring_rates import format_report, scoring_rates

    console = _console()
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


def cmd_fuzz(args: argparse.Namespace) -> int:
    """Hostile requests against the rules and table services; exit 1 if any was mishandled."""
    from cardtable.hostile import fuzz_stack, render_fuzz_report

    console = _console()
    with WorkProgress("fuzz", console, unit="requests") as progress:
        progress.start(args.requests)
        report = run_async(fuzz_stack(args.requests, args.seed, progress=progress.update))
    console.print(render_fuzz_report(report))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(report.as_dict(), indent=1))
    print(json.dumps(report.as_dict()))
    return 0 if report.ok else 1


def cmd_tournament(args: argparse.Namespace) -> int:
    from cardtable.bots.tournament import estimate_game_seconds, run_tournament, tournament_games

    console = _console()
    seats = [name.strip() for name in args.seats.split(",") if name.strip()]
    options = _options(args.option)
    strategy_options = {"search": {"budget_ms": args.budget_ms}}
    try:
        per_game = estimate_game_seconds(
            args.game, seats, args.seed, options=options, strategy_options=strategy_options
        )
        games = tournament_games(args.games, len(seats))
        console.print(tournament_estimate(games, per_game))
        with WorkProgress("tournament", console, unit="games") as progress:
            progress.start(games)
            report = run_tournament(
                args.game,
                seats,
                args.games,
                args.seed,
                options=options,
                strategy_options=strategy_options,
                progress=progress.update,
            )
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    if args.json:
        print(json.dumps(report))
        return 0
    table = Table(title=f"{report['game']}: {report['games']} games, {report['boards']} boards")
    for column in ("strategy", "mean score", "win rate", "advantage/game", "95% CI"):
        table.add_column(column, justify="right")
    for name in dict.fromkeys(report["seats"]):
        row = report[name]
        low, high = row["ci95"]
        table.add_row(
            name,
            f"{row['mean_score']:.2f}",
            f"{row['win_rate']:.1%}",
            f"{row['advantage']:+.2f}",
            f"[{low:+.2f}, {high:+.2f}]",
        )
    _console(stderr=False).print(table)
    _console(stderr=False).print(
        f"{report['seconds']} s; advantage: own score minus the other seats', higher is better"
    )
    return 0


#: A tournament expected to take longer than this says how to make it shorter.
LONG_TOURNAMENT_SECONDS = 300.0


def tournament_estimate(games: int, seconds_per_game: float) -> Text:
    """What a tournament is about to cost, said before it starts.

    >>> print(tournament_estimate(40, 1.5))
    about 0.67 games/s: 40 games will take about 1m00s
    """
    seconds = games * seconds_per_game
    text = (
        f"about {rate_text(1 / max(seconds_per_game, 1e-6))} games/s: "
        f"{games} games will take about {duration_text(seconds)}"
    )
    if seconds > LONG_TOURNAMENT_SECONDS:
        text += " (fewer --games or a smaller --budget-ms make it shorter)"
    return Text(text)


def cmd_run(args: argparse.Namespace) -> int:
    from cardtable.stack.run import run_stack

    console = _console(stderr=False)
    return asyncio.run(
        run_stack(
            Path(args.log_dir),
            # printed commands stay one line each, ready to paste
            partial(console.print, soft_wrap=True),
            demo=not args.no_demo,
            # a live display redraws in place; in a file its last frame would run into the
            # next line printed, so there the demonstration's table is printed once, at the end
            live=console.is_terminal,
            listen_host=args.host,
            exit_after_demo=args.exit_after_demo,
        )
    )


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
    rec.add_argument(
        "--with-shuffle-proofs",
        action="store_true",
        help="derive each deck from a seed and record its commitment and seed",
    )
    rec.set_defaults(handler=cmd_record)

    ver = commands.add_parser("verify", help="replay a record and check every action and score")
    ver.add_argument("file")
    ver.set_defaults(handler=cmd_verify)

    rep = commands.add_parser("replay", help="show a recorded game deal by deal, trick by trick")
    rep_source = rep.add_mutually_exclusive_group(required=True)
    rep_source.add_argument("table_id", nargs="?", help="a table id (read from NATS_URL)")
    rep_source.add_argument("--file", help="a game record (JSON)")
    view = rep.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, help="only what this seat saw (default: spectator)")
    view.add_argument("--open", action="store_true", help="all hands open")
    rep.add_argument("--step", action="store_true", help="pause after each trick (terminal)")
    rep.add_argument("--deal", type=int, metavar="K", help="show only the K-th deal")
    rep.add_argument("--html", metavar="FILE", help="write a self-contained page to step through")
    rep.set_defaults(handler=cmd_replay)

    aud = commands.add_parser("audit", help="check a log or record: results, seeds, no gaps")
    aud_source = aud.add_mutually_exclusive_group(required=True)
    aud_source.add_argument("table_id", nargs="?", help="a table id (read from NATS_URL)")
    aud_source.add_argument("--file", help="a game record (JSON)")
    aud.add_argument(
        "--require-shuffle-proofs",
        action="store_true",
        help="fail a deal that has no shuffle proof",
    )
    aud.add_argument("--json", action="store_true", help="print the report as JSON")
    aud.set_defaults(handler=cmd_audit)

    rebuild_parser = commands.add_parser(
        "rebuild",
        help="rebuild the scoring projection from the log and compare it with the live one",
    )
    rebuild_parser.add_argument("--schema", default="scoring_rebuild", help="schema to build into")
    rebuild_parser.add_argument(
        "--compare-with", default="scoring", help="live schema to compare with ('' to skip)"
    )
    rebuild_parser.set_defaults(handler=cmd_rebuild)

    export = commands.add_parser("export", help="write game records from the event log")
    export_source = export.add_mutually_exclusive_group(required=True)
    export_source.add_argument("table_id", nargs="?", help="one table id")
    export_source.add_argument("--all", action="store_true", help="every finished game")
    export.add_argument("--since", help="with --all: tables created on or after this date")
    export.add_argument("--out", help="a file (one table) or a folder (--all); default stdout")
    export.set_defaults(handler=cmd_export)

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

    fuzz = commands.add_parser(
        "fuzz", help="hostile requests against the rules and table services; how each was answered"
    )
    fuzz.add_argument("--requests", type=int, default=10_000)
    fuzz.add_argument("--seed", type=int, default=1)
    fuzz.add_argument("--json-out", help="also write the report to this file")
    fuzz.set_defaults(handler=cmd_fuzz)

    tour = commands.add_parser(
        "tournament", help="duplicate tournament between bot strategies, engine only"
    )
    tour.add_argument("--game", required=True, choices=games)
    tour.add_argument("--seats", required=True, help="a strategy per seat: random, rules or search")
    tour.add_argument("--games", type=int, default=100, help="rounded up to whole rotations")
    tour.add_argument("--seed", type=int, default=1)
    tour.add_argument("--budget-ms", type=float, default=200.0, help="search time per move")
    tour.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    tour.add_argument("--json", action="store_true", help="print one JSON object")
    tour.set_defaults(handler=cmd_tournament)

    run = commands.add_parser("run", help="run the whole system locally until Ctrl-C")
    run.add_argument(
        "--log-dir",
        default=".run/logs",
        help="where the services write their logs; its parent holds nats.conf, env and the lock",
    )
    run.add_argument("--no-demo", action="store_true", help="serve without the demonstration")
    run.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address the services listen on (default: this machine only)",
    )
    run.add_argument(
        "--exit-after-demo", action="store_true", help="stop everything once the demo is shown"
    )
    run.set_defaults(handler=cmd_run)
    for module in (token, call):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: Any = args.handler(args)
    except EngineError as error:
        _console().print(f"[red]error:[/red] {error}")
        return 2
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
