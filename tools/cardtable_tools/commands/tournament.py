"""``cardtable tournament``: a duplicate tournament between computer players, engine only;
``cardtable tournament-pool``: several runs' reports as one."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from cardtable.bots.levels import LEVEL_NAMES, strategy_and_options
from cardtable.bots.names import BOT_STRATEGY_NAMES
from cardtable.cli.console import parse_options, report_console
from cardtable.cli.progress import WorkProgress, duration_text, rate_text
from cardtable.cli.subcommands import Subcommands
from cardtable.engine.registry import GAMES


def cmd_tournament(args: argparse.Namespace) -> int:
    from cardtable_tools.tournament import (
        board_seatings,
        default_workers,
        estimate_game,
        run_tournament,
        tournament_games,
    )

    console = report_console()
    seats = [name.strip().lower() for name in args.seats.split(",") if name.strip()]
    options = parse_options(args.option)
    try:
        strategy_options = budget_options(args.budget_ms, args.level_budget)
        strategy_options.update(variant_options(args.variant, strategy_options))
        per_game = estimate_game(
            args.game, seats, args.seed, options=options, strategy_options=strategy_options
        ).seconds
        per_board = len(board_seatings(seats, args.every_rotation))
        games = tournament_games(args.games, per_board)
        workers = args.workers or default_workers()
        # Boards are what the processes share out: no more of them at work than boards.
        at_once = max(1, min(workers, games // per_board))
        console.print(tournament_estimate(games, per_game / at_once))
        with WorkProgress("tournament", console, unit="games") as progress, stop_on_sigterm():
            progress.start(games)
            report = run_tournament(
                args.game,
                seats,
                args.games,
                args.seed,
                options=options,
                strategy_options=strategy_options,
                progress=progress.update,
                workers=workers,
                every_rotation=args.every_rotation,
                by_deal=args.by_deal,
                first_board=args.first_board,
            )
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    except KeyboardInterrupt:
        console.print("tournament: stopped before a board was finished, nothing to report")
        return STOPPED_EXIT_CODE
    if report["stopped"]:
        console.print(stopped_text(report, games // per_board))
    processes = f"process{'es' if report['workers'] > 1 else ''}"
    show_report(report, args.json, f"{report['seconds']} s in {report['workers']} {processes}")
    if args.chart and not args.json:
        from cardtable_tools.tournament_chart import draw_ladder

        # a path to open stays one line, whatever the console's width
        console.print(f"chart: {draw_ladder(report, Path(args.chart))}", soft_wrap=True)
    return 0


#: The exit code of a tournament stopped before it finished a board: a shell's for SIGINT.
STOPPED_EXIT_CODE = 130


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """``SIGTERM`` (``kill``, ``timeout``, an operator's stop) stops the tournament as the
    terminal's interrupt does, so the boards it finished are still reported."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped_text(report: dict[str, Any], boards: int) -> str:
    """What a stopped tournament reports, and how to play the rest of its boards.

    >>> stopped_text({"boards": 3, "first_board": 10, "seed": 2}, 8).split("; ")
    ['tournament: stopped after 3 of 8 boards', 'the report holds those', \
'--seed 2 --first-board 13 plays on from the next']
    """
    following = report["first_board"] + report["boards"]
    return (
        f"tournament: stopped after {report['boards']} of {boards} boards; the report holds "
        f"those; --seed {report['seed']} --first-board {following} plays on from the next"
    )


class ReportFileError(ValueError):
    """A report file that cannot be read, with the reason."""


def read_report(path: str) -> dict[str, Any]:
    """The ``tournament --json`` report that ``path`` holds."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportFileError(f"{path}: cannot read a report: {error}") from error
    if not isinstance(report, dict):
        raise ReportFileError(f"{path}: not a `tournament --json` report")
    return report


def cmd_tournament_pool(args: argparse.Namespace) -> int:
    from cardtable_tools.tournament_pool import PoolError, pool_reports

    console = report_console()
    try:
        reports = [read_report(path) for path in args.reports]
        pooled = pool_reports(reports, args.reports)
    except (ReportFileError, PoolError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    runs = zip(pooled["seeds"], pooled["first_boards"], strict=True)
    seeds = ", ".join(f"{seed} from board {first}" if first else str(seed) for seed, first in runs)
    show_report(pooled, args.json, f"{pooled['runs']} runs pooled (seeds {seeds})")
    return 0


def show_report(report: dict[str, Any], as_json: bool, where_from: str) -> None:
    """A report as one JSON object, or as the ladder (and the deals by size, if it has them)
    with ``where_from`` and how to read the advantage."""
    if as_json:
        print(json.dumps(report))
        return
    out = report_console(stderr=False)
    out.print(ladder_table(report))
    if "by_deal" in report:
        out.print(deal_table(report))
    out.print(f"{where_from}; advantage: own score minus the other seats', higher is better")


def budget_options(search_ms: float, level_budgets: list[str]) -> dict[str, dict[str, Any]]:
    """Each seated name's options: the plain search at ``search_ms``; a level at its own
    budget unless ``level_budgets`` (``NAME=MS``) gives it another, to weigh a level against
    the search at another budget (hard at 50 ms against the search at 200 ms).

    >>> budget_options(200.0, ["hard=50"])
    {'search': {'budget_ms': 200.0}, 'hard': {'budget_ms': 50.0}}
    """
    options: dict[str, dict[str, Any]] = {"search": {"budget_ms": search_ms}}
    for text in level_budgets:
        name, _, value = text.partition("=")
        name = name.strip().lower()
        if name not in LEVEL_NAMES or strategy_and_options(name)[0] != "search":
            searching = [
                level for level in LEVEL_NAMES if strategy_and_options(level)[0] == "search"
            ]
            raise ValueError(
                f"--level-budget {text!r}: name a level that searches ({', '.join(searching)})"
            )
        try:
            budget = float(value)
        except ValueError:
            budget = 0.0
        if not budget > 0:
            raise ValueError(f"--level-budget {text!r}: the budget is a positive number of ms")
        options[name] = {"budget_ms": budget}
    return options


def variant_options(
    variants: list[str], seated: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The options of each ``--variant NAME=PLAYER`` seat: ``PLAYER`` is a strategy or level
    with options (``hard:playout=rules``), on top of what its base is seated with (its budget).

    >>> variant_options(["plain=hard:playout=rules"], {"hard": {"budget_ms": 20.0}})
    {'plain': {'budget_ms': 20.0, 'playout': 'rules', 'variant_of': 'hard'}}
    """
    from cardtable_tools.player_spec import parse_player
    from cardtable_tools.tournament import VARIANT_OF

    options: dict[str, dict[str, Any]] = {}
    for text in variants:
        name, separator, player = text.partition("=")
        name = name.strip().lower()
        base, own = parse_player(player.strip().lower())
        if not separator or not name or not base:
            raise ValueError(
                f"--variant {text!r}: write NAME=PLAYER, e.g. plain=hard:playout=rules"
            )
        if name in BOT_STRATEGY_NAMES or base not in BOT_STRATEGY_NAMES:
            raise ValueError(
                f"--variant {text!r}: a new name for one of {', '.join(BOT_STRATEGY_NAMES)}"
            )
        options[name] = {**seated.get(base, {}), **own, VARIANT_OF: base}
    return options


def ladder_table(report: dict[str, Any]) -> Table:
    """The strength ladder: the strategies from the strongest down, with their figures."""
    table = Table(title=f"{report['game']}: {report['games']} games, {report['boards']} boards")
    anytime = all("ci95_anytime" in report[name] for name in report["ladder"])
    columns = ["rank", "strategy", "mean score", "win rate", "advantage/game", "95% CI"]
    if anytime:
        columns.append("95% CI, any looks")
    for column in (*columns, "games to clear 0"):
        table.add_column(column, justify="right")
    for rank, name in enumerate(report["ladder"], start=1):
        row = report[name]
        to_clear = row["games_to_clear"]
        cells = [
            str(rank),
            name,
            f"{row['mean_score']:.2f}",
            f"{row['win_rate']:.1%}",
            f"{row['advantage']:+.2f}",
            interval_text(row["ci95"]),
        ]
        if anytime:
            cells.append(interval_text(row["ci95_anytime"]))
        table.add_row(*cells, "-" if to_clear is None else f"~{to_clear:,}")
    return table


def interval_text(interval: list[float] | None) -> str:
    """An interval as the tables show it (``-`` for none).

    >>> interval_text([-1.234, 5.0]), interval_text(None)
    ('[-1.23, +5.00]', '-')
    """
    if interval is None:
        return "-"
    low, high = interval
    return f"[{low:+.2f}, {high:+.2f}]"


def deal_table(report: dict[str, Any]) -> Table:
    """Each strategy's deals by size (in Belote and 3-5-8 by a seat's part in the deal), the
    strategies side by side within a kind: where the advantage of the ladder above is won or
    lost."""
    from cardtable_tools.deal_breakdown import row_order

    rows = report["by_deal"]
    every_row = [row for entries in rows.values() for row in entries]
    bids = any("bid" in row for row in every_row)
    roles = any("role" in row for row in every_row)
    made = any("made_rate" in row for row in every_row)
    title = "by part in the deal" if roles else "by deal size"
    table = Table(title=f"{report['game']}: {title} (per seat, mean over deals)")
    columns = ["part" if roles else "cards each", "strategy", "deals", "mean score"]
    columns += ["advantage/deal", "tricks"]
    if bids:
        columns += ["bid", "exact", "over"]
    if made:
        columns += ["made"]
    for column in columns:
        table.add_column(column, justify="right")
    kinds = sorted({(row["cards_each"], row.get("role", "")) for row in every_row}, key=row_order)
    for kind in kinds:
        for name in report["ladder"]:
            row = next(
                (row for row in rows[name] if (row["cards_each"], row.get("role", "")) == kind),
                None,
            )
            if row is None:
                continue
            cells = [
                kind[1] if roles else str(kind[0]),
                name,
                f"{row['deals']:,}" if isinstance(row["deals"], int) else f"{row['deals']:,.2f}",
                f"{row['mean_score']:.2f}",
                f"{row['advantage']:+.2f}",
                f"{row['tricks']:.2f}",
            ]
            if bids:
                rates = (f"{row['exact_rate']:.1%}", f"{row['over_rate']:.1%}")
                cells += [f"{row['bid']:.2f}", *rates]
            if made:
                cells += [f"{row['made_rate']:.1%}" if "made_rate" in row else "-"]
            table.add_row(*cells, end_section=name == report["ladder"][-1])
    return table


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


def register(commands: Subcommands) -> None:
    """Add ``tournament`` and ``tournament-pool``."""
    games = sorted(GAMES)
    tour = commands.add_parser(
        "tournament", help="duplicate tournament between bot strategies, engine only"
    )
    tour.add_argument("--game", required=True, choices=games)
    tour.add_argument(
        "--seats",
        required=True,
        help=f"a strategy or level per seat: {', '.join(BOT_STRATEGY_NAMES)}",
    )
    tour.add_argument("--games", type=int, default=100, help="rounded up to whole boards")
    tour.add_argument(
        "--every-rotation",
        action="store_true",
        help="play a board's rotations that repeat a seating too (a,b,a,b turned by two)",
    )
    tour.add_argument("--seed", type=int, default=1)
    tour.add_argument(
        "--first-board",
        type=int,
        default=0,
        metavar="N",
        help="start at the seed's board N (a stopped run says which one plays on from it)",
    )
    tour.add_argument(
        "--budget-ms",
        type=float,
        default=200.0,
        help="the search strategy's work per move, in ms of a quiet core (a level keeps its own)",
    )
    tour.add_argument(
        "--level-budget",
        action="append",
        default=[],
        metavar="LEVEL=MS",
        help="play a searching level at another budget, e.g. hard=50 (repeatable)",
    )
    tour.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=PLAYER",
        help="seat NAME plays a strategy or level with options, e.g. plain=hard:playout=rules "
        "(repeatable)",
    )
    tour.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    tour.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes playing boards at once (default: one per core; 1 plays in this one)",
    )
    tour.add_argument(
        "--by-deal",
        action="store_true",
        help="also break each strategy's figures down by deal size: score, advantage, tricks "
        "and, in Whist, bids and how often they were exact or exceeded",
    )
    tour.add_argument("--chart", metavar="FILE", help="also draw the strength ladder as a PNG")
    tour.add_argument("--json", action="store_true", help="print one JSON object")
    tour.set_defaults(handler=cmd_tournament)
    pool = commands.add_parser(
        "tournament-pool",
        help="pool the boards of tournament runs of one match-up (different seeds)",
    )
    pool.add_argument("reports", nargs="+", metavar="REPORT", help="a `tournament --json` output")
    pool.add_argument("--json", action="store_true", help="print one JSON object")
    pool.set_defaults(handler=cmd_tournament_pool)
