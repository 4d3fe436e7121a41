"""``cardtable audit``, ``export`` and ``rebuild``: an operator's work on the event log and the
projection built from it."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cardtable.cli.console import read_json, report_console
from cardtable.cli.log_access import log_settings
from cardtable.cli.progress import WorkProgress
from cardtable.cli.subcommands import Subcommands
from cardtable.engine.record import dumps_record
from cardtable.replay.audit import PASSED, AuditReport, audit_record
from cardtable.replay.render import render_audit


def cmd_audit(args: argparse.Namespace) -> int:
    console = report_console(stderr=False)
    if args.table_id:
        return _audit_table(args, console)
    data = read_json(args.file, console)
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
    from cardtable.eventlog.audit import LOG, SIGNATURES, audit_log
    from cardtable.eventlog.reader import log_reader, verifying_keys
    from cardtable.platform.log_signing import LogKeyError

    async def fetch() -> Any:
        verifier = await verifying_keys(os.environ)
        async with log_reader(log_settings()) as reader:
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

    console = report_console()
    since = 0.0
    if args.since:
        try:
            since = datetime.fromisoformat(args.since).replace(tzinfo=UTC).timestamp()
        except ValueError:
            console.print(Text(f"--since takes a date like 2026-11-29, not {args.since!r}", "red"))
            return 2

    async def export() -> int:
        async with log_reader(log_settings()) as reader:
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
    from cardtable.eventlog.audit import NO_KEYS
    from cardtable.eventlog.reader import log_reader, verifying_keys
    from cardtable.platform.log_names import LogNames
    from cardtable.scoring_service.aligned_comparison import compare_at_same_position
    from cardtable.scoring_service.rebuild import RebuildProgress, rebuild

    console = report_console()
    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        console.print(Text("set DATABASE_URL (and NATS_URL) to rebuild the projection", "red"))
        return 2
    try:
        settings = log_settings()
    except RuntimeError as error:
        console.print(Text(str(error), "red"))
        return 2

    async def work() -> int:
        verifier = await verifying_keys(os.environ)
        if verifier is None:
            console.print(Text(NO_KEYS, "red"))
            return 2
        async with log_reader(settings) as reader:
            with WorkProgress(f"rebuild into {args.schema}", console, unit="messages") as progress:
                progress.start()

                def report(step: RebuildProgress) -> None:
                    progress.update(step.position, step.last_sequence)

                result = await rebuild(
                    database_url,
                    reader.connection.jetstream,
                    LogNames.from_prefix(settings.prefix),
                    schema=args.schema,
                    on_progress=report,
                    # a second process reads the log while this one projects
                    reader_nats_url=settings.url,
                    verifier=verifier,
                )
        console.print(
            f"rebuilt {result.messages:,} messages ({result.events:,} events) into "
            f"{result.schema} in {result.seconds:.1f} s: {result.events_per_second:,.0f} "
            f"events/s, {result.dead_letters} dead letters"
        )
        if not args.compare_with:
            return 0
        async with log_reader(settings) as reader:
            position, comparisons = await compare_at_same_position(
                database_url,
                reader.connection.jetstream,
                LogNames.from_prefix(settings.prefix),
                live=args.compare_with,
                rebuilt=args.schema,
                verifier=verifier,
            )
        table = Table(
            title=f"{args.compare_with} (live) against {args.schema} (rebuilt), both at "
            f"stream sequence {position:,}"
        )
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
    except (RuntimeError, TimeoutError, ValueError) as error:  # NotAlignedError included
        console.print(Text(str(error), "red"))
        return 2


def register(commands: Subcommands) -> None:
    """Add ``audit``, ``rebuild`` and ``export``."""
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
