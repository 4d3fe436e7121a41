"""How many seats one bot-service process keeps playing without missing a turn timer.

    python -m cardtable_tools.bench.bot_seats --tables 50 --seconds 120 --quick --strategy normal

Starts NATS (``NATS_URL`` or the embedded wheel), then the rules, table and bot services as
separate processes, exactly as ``cardtable run`` does. It creates ``--tables`` Hearts tables
(classic games to 100 points, or one-deal games with ``--quick``) that nobody joins: after
the fill wait, computer players take all four seats. Each finished table is replaced at once,
so the bot service holds four seats per table the whole time. Every second it reads the bot
service's metrics; at the end it reads every table's log and counts the turns whose timer ran
out (``TurnTimedOut``): each is a turn the bot service missed. It also checks that every timer
in the log was armed with the right turn number, so that a missed turn could not have gone
unnoticed, and counts the bot service's own "turn timed out" log lines.

It prints one JSON object: seats held (min, mean, max), tables, moves and moves per second,
move latency from the bot's side, timeouts (log and events), errors and CPU seconds used by
each process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
from prometheus_client.parser import text_string_to_metric_families

from cardtable.eventlog.opening import opened_batches, still_sealed
from cardtable.eventlog.reader import log_reader
from cardtable.platform.settings import LogReadingSettings
from cardtable.platform.tokens import TokenCodec
from cardtable.table_service.matchmaking import DEFAULT_SETTINGS
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc
from cardtable_tools.bench.stack import system_stack
from cardtable_tools.stack.processes import ServiceProcess

TIMEOUT_LOG_LINE = "turn timed out on a computer player's seat"


@dataclass
class Stack:
    nats_url: str
    prefix: str
    tokens: TokenCodec
    table: ServiceProcess
    bots: ServiceProcess
    processes: dict[str, ServiceProcess]
    bots_log: Path


@contextlib.asynccontextmanager
async def bench_stack(log_dir: Path) -> AsyncIterator[Stack]:
    """NATS, the rules, table and bot services (the bots logging at INFO into ``log_dir``)."""
    async with system_stack(
        log_dir,
        services=("rules", "table", "bots"),
        prefix_stem="botbench",
        extra_settings={"bots": {"LOG_LEVEL": "INFO"}},
    ) as system:
        processes = system.services
        yield Stack(
            system.nats_url,
            system.prefix,
            system.tokens,
            processes["table"],
            processes["bots"],
            processes,
            log_dir / "bots.log",
        )


def scrape(port: int) -> dict[str, float]:
    """The bot service's metrics, summed over labels: ``{name: value}``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values


async def keep_tables_running(
    stub: table_pb2_grpc.TableServiceAsyncStub,
    tokens: TokenCodec,
    tables: int,
    settings: events_pb2.TableSettings,
    quick: bool,
    until: float,
    created: list[str],
) -> None:
    """``tables`` tables at all times until ``until``: a finished one is replaced.

    Finished tables are told from the lobby listing (open and running tables), not from
    GetTable, so that the bench adds no reads of the tables being played. Each table has a
    host of its own, as in production: one player may keep only a few tables open.
    """

    async def create() -> str:
        host = f"bench-host-{uuid.uuid4().hex[:12]}"
        metadata = (("authorization", f"Bearer {tokens.issue(host)}"),)
        reply = await stub.CreateTable(
            table_pb2.CreateTableRequest(
                command_id=str(uuid.uuid4()),
                game="hearts",
                seats=4,
                options=common_pb2.GameOptions(values={"quick": "true"} if quick else {}),
                settings=settings,
            ),
            metadata=metadata,
        )
        created.append(reply.table_id)
        return reply.table_id

    playing = set(await asyncio.gather(*(create() for _ in range(tables))))
    while time.monotonic() < until:
        await asyncio.sleep(1.0)
        listed: set[str] = set()
        token = ""
        while True:
            page = await stub.ListTables(
                table_pb2.ListTablesRequest(page_size=200, page_token=token)
            )
            listed.update(summary.table_id for summary in page.tables)
            token = page.next_page_token
            if not token:
                break
        finished = playing - listed
        playing -= finished
        playing.update(await asyncio.gather(*(create() for _ in finished)))


async def read_logs(
    nats_url: str, prefix: str, table_ids: list[str], window_end: float
) -> dict[str, int]:
    """Timeouts, actions and the consistency of timer turns, from every table's log.

    Timeouts after ``window_end`` (while the bench reads the logs and stops the services)
    are counted apart.
    """
    counts = {
        "actions": 0,
        "timeouts": 0,
        "timeouts_after_window": 0,
        "timers": 0,
        "timers_with_wrong_turn": 0,
        "logs_with_a_deal_running": 0,
    }
    settings = LogReadingSettings.from_env(
        {**os.environ, "NATS_URL": nats_url, "EVENT_PREFIX": prefix}
    )
    async with log_reader(settings) as reader:
        for table_id in table_ids:
            # A seat's passed cards are a sealed ActionTaken until the deal ends: open the
            # ended deals, and check the turns only of a log with nothing left sealed.
            batches = opened_batches(
                table_id, [stored.batch for stored in await reader.table(table_id)]
            )
            sealed = still_sealed(batches)
            counts["logs_with_a_deal_running"] += sealed > 0
            actions = 0
            for batch in batches:
                for event in batch.events:
                    if event.HasField("action_taken"):
                        actions += 1
                    elif event.HasField("turn_timed_out"):
                        late = batch.occurred_at.ToSeconds() > window_end
                        counts["timeouts_after_window" if late else "timeouts"] += 1
                    elif event.HasField("turn_timer_started") and not sealed:
                        counts["timers"] += 1
                        if event.turn_timer_started.turn != actions:
                            counts["timers_with_wrong_turn"] += 1
            counts["actions"] += actions
    return counts


def timeout_log_lines(path: Path, window_end: float) -> int:
    """The bot service's "turn timed out" lines logged up to ``window_end``."""
    count = 0
    for line in path.read_text(errors="replace").splitlines():
        if TIMEOUT_LOG_LINE not in line:
            continue
        with contextlib.suppress(ValueError, KeyError):
            logged = datetime.fromisoformat(json.loads(line)["timestamp"]).timestamp()
            count += logged <= window_end
    return count


async def run_bench(
    tables: int, seconds: float, turn_timer_ms: int, quick: bool = False, strategy: str = "rules"
) -> dict[str, Any]:
    log_dir = Path(tempfile.mkdtemp(prefix="cardtable-bot-bench-"))
    async with bench_stack(log_dir) as stack:
        settings = events_pb2.TableSettings(
            turn_timer_ms=turn_timer_ms,
            fill_with_bots=True,
            fill_wait_ms=100,
            bot_strategy=strategy,
        )
        created: list[str] = []
        cpu_before = {name: process.cpu_seconds() for name, process in stack.processes.items()}
        started = time.monotonic()
        until = started + seconds
        seats_samples: list[float] = []
        first_scrape = scrape(stack.bots.metrics_port)
        async with grpc.aio.insecure_channel(stack.table.address) as channel:
            stub = table_pb2_grpc.TableServiceStub(channel)
            runner = asyncio.create_task(
                keep_tables_running(stub, stack.tokens, tables, settings, quick, until, created)
            )
            while not runner.done():
                await asyncio.sleep(1.0)
                seats = scrape(stack.bots.metrics_port).get("bot_seats_held", 0.0)
                # Skip the ramp-up: the first fill wait and the first claims.
                if time.monotonic() - started > min(5.0, seconds / 4):
                    seats_samples.append(seats)
            await runner
        elapsed = time.monotonic() - started
        window_end = time.time()
        last = scrape(stack.bots.metrics_port)
        cpu = {
            name: round(process.cpu_seconds() - cpu_before[name], 1)
            for name, process in stack.processes.items()
        }
        logs = await read_logs(stack.nats_url, stack.prefix, created, window_end)
        timeout_lines = timeout_log_lines(stack.bots_log, window_end)
    moves = last.get("bot_moves_total", 0.0) - first_scrape.get("bot_moves_total", 0.0)
    latency_count = last.get("bot_move_seconds_count", 0.0)
    return {
        "tables": tables,
        "game": "hearts, one deal" if quick else "hearts, to 100 points",
        "strategy": strategy,
        "turn_timer_ms": turn_timer_ms,
        "seconds": round(elapsed, 1),
        "seats_held": {
            "min": min(seats_samples, default=0),
            "mean": round(sum(seats_samples) / max(1, len(seats_samples)), 1),
            "max": max(seats_samples, default=0),
        },
        "tables_created": len(created),
        "bot_moves": int(moves),
        "bot_moves_per_s": round(moves / elapsed, 1) if elapsed else 0.0,
        "bot_move_seconds_mean": round(last.get("bot_move_seconds_sum", 0.0) / latency_count, 4)
        if latency_count
        else None,
        "turn_timeouts_in_log": logs["timeouts"],
        "turn_timeouts_in_bot_log_lines": timeout_lines,
        "turn_timeouts_after_the_window": logs["timeouts_after_window"],
        "bot_turn_timeouts_metric": last.get("bot_turn_timeouts_total", 0.0),
        "timers_armed": logs["timers"],
        "tables_unchecked_with_a_deal_running": logs["logs_with_a_deal_running"],
        "timers_with_wrong_turn": logs["timers_with_wrong_turn"],
        "actions_in_log": logs["actions"],
        "bot_errors": last.get("bot_errors_total", 0.0),
        "cpu_seconds": cpu,
        "logs": str(log_dir),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--turn-timer-ms",
        type=int,
        default=DEFAULT_SETTINGS.turn_timer_ms,
        help="each table's turn timer (default: a table's own default, 30 s)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="one-deal games (replaced as they finish)"
    )
    parser.add_argument("--strategy", default="rules", help="the tables' bot strategy")
    args = parser.parse_args(argv)
    report = asyncio.run(
        run_bench(args.tables, args.seconds, args.turn_timer_ms, args.quick, args.strategy)
    )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
