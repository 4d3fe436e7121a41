"""``cardtable bench --faults``: break the system while games run, then prove nothing was lost.

While people's clients and computer players play quick Hearts games, the run in turn kills
(SIGKILL) and restarts the table service, the scoring service and the bot service, then stops
and starts NATS and PostgreSQL, ``rounds`` times over, with ``pause_seconds`` of normal play
between faults. After each fault it measures how long until the service (or server) was up
again and until the system worked again: a person's move acknowledged, a computer player's
move stored, the scoring projection caught up past a message stored after the restart.

Then it stops new games, lets the games in hand finish, stops the writers and checks the
whole log: every move a client saw acknowledged is in it (``lost``), no command or table
version is stored twice and none is missing (``duplicates``, gaps), every table's log audits
clean, and the live projection equals one rebuilt from the log.

The run always starts its own NATS and PostgreSQL from the pip wheels, even when
``NATS_URL``/``DATABASE_URL`` are set, because it must restart them (see ``fault_stack``).

Short run (one of each fault, as in ``make test``)::

    await run_faults(tables=6, rounds=1, pause_seconds=2.0, progress=print)

Long run::

    await run_faults(tables=20, rounds=3, pause_seconds=5.0, progress=print)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import asyncpg
import grpc

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.store import StoredBatch
from cardtable.platform.log_names import LogNames
from cardtable.platform.logging import get_logger
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.postgres import close_pool
from cardtable.scoring_service.database import create_schema_pool
from cardtable.scoring_service.log_reading import read_log
from cardtable.scoring_service.rebuild import compare_projections, rebuild
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2_grpc
from cardtable_tools.bench.fault_checks import check_log
from cardtable_tools.bench.fault_cluster import (
    PAUSE_SECONDS,
    crash_and_restart,
    meta_leader,
    named,
    pause_and_resume,
    stream_leader,
    wait_whole,
)
from cardtable_tools.bench.fault_players import (
    CHANNEL_OPTIONS,
    BotTables,
    Ledger,
    PersonTable,
)
from cardtable_tools.bench.fault_report import (
    RECOVERY_TARGET_SECONDS,
    FaultReport,
    Recovery,
    render_fault_report,
)
from cardtable_tools.bench.fault_stack import LIVE_SCHEMA, FaultStack, Restart, fault_stack
from cardtable_tools.bench.fault_watch import LogWatch, ProjectionPosition

__all__ = ["FAULTS", "FaultReport", "render_fault_report", "run_faults"]

REBUILD_SCHEMA = "faults_rebuild"
#: A check not working again this long after the restart is recorded as "never".
RECOVERY_LIMIT_SECONDS = 30.0
#: How long the games in hand get to finish once no new game starts.
FINISH_LIMIT_SECONDS = 90.0
#: How long the projection gets to reach the end of the log once nothing writes any more.
CATCH_UP_LIMIT_SECONDS = 60.0


@dataclass(frozen=True)
class Fault:
    """One thing the run breaks, and what must work again afterwards."""

    target: str
    action: str
    checks: tuple[str, ...]


FAULTS = (
    Fault("table", "SIGKILL, restart", ("person_move", "bot_move")),
    Fault("scoring", "SIGKILL, restart", ("projection",)),
    Fault("bots", "SIGKILL, restart", ("bot_move",)),
    Fault("nats", "stop, start", ("person_move", "bot_move", "projection")),
    Fault("postgres", "stop, start", ("projection",)),
)
EVERYTHING = ("person_move", "bot_move", "projection")
#: The faults of a three-server NATS cluster (``fault_cluster``): the services stay up.
CLUSTER_FAULTS = (
    Fault("stream-leader", "SIGKILL, restart", EVERYTHING),
    Fault("stream-leader", f"SIGSTOP {PAUSE_SECONDS:g} s, SIGCONT", EVERYTHING),
    Fault("meta-leader", "SIGKILL, restart", EVERYTHING),
)


@dataclass
class Observers:
    """What the run watches the system with."""

    ledger: Ledger
    watch: LogWatch
    position: ProjectionPosition


async def run_faults(
    *,
    tables: int,
    rounds: int,
    pause_seconds: float,
    progress: Callable[[str], None] = lambda _: None,
    down_seconds: float = 1.0,
    move_pause_seconds: float = 0.05,
    log_dir: Path | None = None,
    nats_cluster: int = 1,
) -> FaultReport:
    """Run the fault scenario (module docstring) and return every figure it measured.

    ``tables`` are played at once, half by people's clients and half by computer players;
    ``down_seconds`` is how long each victim stays down; service logs go to ``log_dir``
    (kept) or to a temporary directory (removed). With ``nats_cluster=3`` NATS is a cluster
    and the faults are ``CLUSTER_FAULTS`` instead.
    """
    report = FaultReport(tables=tables, rounds=rounds, nats_cluster=nats_cluster)
    began = time.monotonic()
    # Not under the scratch directory: a failed run's logs must outlive it (see keep_logs).
    logs = log_dir or Path(tempfile.mkdtemp(prefix="cardtable-faults-logs-"))
    report.logs = str(logs)
    with tempfile.TemporaryDirectory(prefix="cardtable-faults-") as scratch:
        progress(f"starting NATS, PostgreSQL and the four services (logs: {logs}) ...")
        try:
            async with fault_stack(logs, Path(scratch), nats_cluster) as stack:
                progress(f"system up in {time.monotonic() - began:.1f} s")
                try:
                    await _run(
                        stack, report, progress, down_seconds, move_pause_seconds, pause_seconds
                    )
                except Exception as error:  # a report saying what broke beats a traceback
                    report.error = repr(error)
                    progress(f"fault run failed: {error!r}")
                progress("stopping everything ...")
        finally:
            keep_logs(Path(scratch), logs, report, remove=log_dir is None)
    report.seconds = time.monotonic() - began
    return report


def keep_logs(data_dir: Path, logs: Path, report: FaultReport, *, remove: bool) -> None:
    """Put the servers' logs beside the services'; drop them all only after a clean run.

    A run that missed a target keeps every log where ``report.logs`` (and the failure message
    that quotes it) says; one asked to keep them (``log_dir``) always keeps them.
    """
    for server_log in data_dir.glob("*.log"):
        with contextlib.suppress(OSError):
            shutil.copyfile(server_log, logs / server_log.name)
    if remove and report.ok:
        shutil.rmtree(logs, ignore_errors=True)
        report.logs = ""


async def _run(
    stack: FaultStack,
    report: FaultReport,
    progress: Callable[[str], None],
    down_seconds: float,
    move_pause_seconds: float,
    pause_seconds: float,
) -> None:
    async with contextlib.AsyncExitStack() as exits:
        # The run's own connections see every restart; saying so each time is only noise.
        quiet = get_logger("cardtable_tools.bench.faults.client")
        quiet.logger.setLevel(logging.ERROR)
        connection = await connect_nats(stack.nats_url, name="fault-run", logger=quiet)
        exits.push_async_callback(connection.close)
        # No connection floor to restore while PostgreSQL is down: asyncpg would log each try.
        pool = await create_schema_pool(stack.postgres.url, LIVE_SCHEMA, min_size=0, max_size=2)
        exits.push_async_callback(close_pool, pool)
        watch = LogWatch(connection.jetstream, stack.log_names)
        await watch.start()
        exits.push_async_callback(watch.stop)
        channel = grpc.aio.insecure_channel(stack.table_address, options=CHANNEL_OPTIONS)
        exits.push_async_callback(channel.close, None)
        position = ProjectionPosition(pool, stack.log_names.stream)
        await position.start()
        exits.push_async_callback(position.stop)
        observers = Observers(Ledger(), watch, position)
        await _play_through_faults(
            stack,
            table_pb2_grpc.TableServiceStub(channel),
            observers,
            report,
            progress,
            down_seconds=down_seconds,
            move_pause_seconds=move_pause_seconds,
            pause_seconds=pause_seconds,
        )
        await _verify(stack, connection, pool, observers, report, progress)


async def _play_through_faults(
    stack: FaultStack,
    stub: table_pb2_grpc.TableServiceAsyncStub,
    observers: Observers,
    report: FaultReport,
    progress: Callable[[str], None],
    *,
    down_seconds: float,
    move_pause_seconds: float,
    pause_seconds: float,
) -> None:
    """Games going, every fault in turn, then the games finished and the writers stopped."""
    ledger = observers.ledger
    people = max(1, report.tables // 2)
    stop_new_games, stop_now = asyncio.Event(), asyncio.Event()
    players = [
        asyncio.create_task(
            PersonTable(stub, stack.tokens, ledger, random.Random(index), move_pause_seconds).play(
                stop_new_games, stop_now
            )
        )
        for index in range(people)
    ]
    bots = BotTables(stub, stack.tokens, ledger, observers.watch, max(1, report.tables - people))
    players.append(asyncio.create_task(bots.keep_going(stop_new_games)))
    died: set[str] = set()
    try:
        await asyncio.sleep(pause_seconds)  # games under way before the first fault
        faults = CLUSTER_FAULTS if stack.nats_cluster else FAULTS
        for round_number in range(1, report.rounds + 1):
            for fault in faults:
                died.update(stack.dead_services())
                if stack.nats_cluster:
                    began = time.monotonic()
                    whole = await wait_whole(
                        stack.nats_cluster, observers.watch.jetstream, stack.replicated_streams
                    )
                    progress(
                        f"the cluster was whole again after {time.monotonic() - began:.1f} s"
                        if whole
                        else "the cluster is not whole again; inflicting the next fault anyway"
                    )
                recovery = await _inflict(stack, fault, round_number, down_seconds, observers)
                await asyncio.sleep(pause_seconds)
                # working again is measured from the fault, so the pause after it has passed
                _measure_rates(recovery, observers.watch, pause_seconds)
                report.recoveries.append(recovery)
                progress(_describe(recovery))
        progress("no new games; letting the games in hand finish ...")
        stop_new_games.set()
        deadline = time.monotonic() + FINISH_LIMIT_SECONDS
        await asyncio.wait(players, timeout=FINISH_LIMIT_SECONDS)
        while not bots.all_finished() and time.monotonic() < deadline:  # noqa: ASYNC110 - the log watch sets no event
            await asyncio.sleep(0.2)
    finally:
        stop_now.set()
        await asyncio.wait(players, timeout=10)
        for task in players:
            task.cancel()
    died.update(stack.dead_services())
    report.services_died = sorted(died)
    # Nothing may write while the log is compared with the ledger and the projection.
    progress("stopping the bot and table services, so that the log stops growing ...")
    for name in ("bots", "table"):
        await asyncio.to_thread(stack.services[name].terminate, 10)


async def _inflict(
    stack: FaultStack, fault: Fault, round_number: int, down_seconds: float, observers: Observers
) -> Recovery:
    restart: Restart
    if stack.nats_cluster:
        restart = await _inflict_on_cluster(stack, fault, down_seconds, observers)
    elif fault.target in ("nats", "postgres"):
        restart = await stack.restart_server(fault.target, down_seconds)
    else:
        restart = await stack.crash_service(fault.target, down_seconds)
    checks = await asyncio.gather(
        *(_working_again(check, restart.checks_from, observers) for check in fault.checks)
    )
    return Recovery(
        fault=fault.target,
        action=fault.action,
        round=round_number,
        down_seconds=down_seconds,
        server_up_seconds=restart.server_up_seconds,
        working_again=dict(zip(fault.checks, checks, strict=True)),
        target_seconds=RECOVERY_TARGET_SECONDS,
        note=restart.note,
        faulted_at=restart.checks_from,
        back_at=restart.restarted_at + (restart.server_up_seconds or 0.0),
        server=restart.server,
    )


async def _inflict_on_cluster(
    stack: FaultStack, fault: Fault, down_seconds: float, observers: Observers
) -> Restart:
    """Kill or pause the server ``fault`` names; the cluster is to go on without it."""
    nodes = stack.nats_cluster
    try:
        if fault.target == "meta-leader":
            name = await asyncio.to_thread(meta_leader, nodes)
        else:
            name = await stream_leader(observers.watch.jetstream, stack.log_names.stream)
        victim = named(nodes, name)
    except Exception as error:  # recorded as a fault that never recovered
        return Restart(time.time(), None, f"no server to hit: {error!r}"[:300])
    faulted_at = time.time()
    if fault.action.startswith("SIGSTOP"):
        back_at, up = await pause_and_resume(victim, PAUSE_SECONDS)
    else:
        back_at, up = await crash_and_restart(victim, down_seconds)
    return Restart(back_at, up, faulted_at=faulted_at, server=victim.server_name)


def _measure_rates(recovery: Recovery, watch: LogWatch, pause_seconds: float) -> None:
    """Moves stored per second in the pause before the fault, from the fault until every check
    worked again (or the server was back, if later), and in the pause after that."""
    faulted_at = recovery.faulted_at
    working_again = faulted_at + (recovery.working_again_seconds or RECOVERY_LIMIT_SECONDS)
    recovered_at = max(recovery.back_at, working_again)
    recovery.moves_per_second = {
        "before": watch.moves_per_second(faulted_at - pause_seconds, faulted_at),
        "during": watch.moves_per_second(faulted_at, recovered_at),
        "after": watch.moves_per_second(recovered_at, recovered_at + pause_seconds),
    }


async def _working_again(check: str, restarted_at: float, observers: Observers) -> float | None:
    """Seconds from the restart until ``check`` was seen working, ``None`` if not in time."""

    def remaining() -> float:
        return RECOVERY_LIMIT_SECONDS - (time.time() - restarted_at)

    if check == "person_move":
        acked_at = await observers.ledger.wait_ack_after(restarted_at, remaining())
        return None if acked_at is None else acked_at - restarted_at
    if check == "bot_move":
        bot_tables = observers.ledger.bot_tables
        moved = await observers.watch.wait_first(
            restarted_at,
            lambda seen: seen.chosen_action and seen.table_id in bot_tables,
            remaining(),
        )
        return None if moved is None else moved.stored_at - restarted_at
    if check == "projection":
        stored = await observers.watch.wait_first(restarted_at, lambda seen: True, remaining())
        if stored is None:
            return None
        projected_at = await observers.position.wait_for(stored.sequence, remaining())
        return None if projected_at is None else projected_at - restarted_at
    raise ValueError(f"unknown check {check!r}")


def _describe(recovery: Recovery) -> str:
    def seconds(value: float | None) -> str:
        return "never" if value is None else f"{value:.1f} s"

    checks = ", ".join(f"{name} {seconds(value)}" for name, value in recovery.working_again.items())
    rates = "/".join(f"{value:.0f}" for value in recovery.moves_per_second.values())
    return (
        f"round {recovery.round}: {recovery.fault}"
        + (f" ({recovery.server})" if recovery.server else "")
        + f" {recovery.action}: up in "
        f"{seconds(recovery.server_up_seconds)}; working again: {checks}"
        + (f"; moves/s before/during/after {rates}" if rates else "")
        + ("" if recovery.ok else "  << TARGET MISSED")
    )


async def _verify(
    stack: FaultStack,
    connection: NatsConnection,
    pool: asyncpg.Pool,
    observers: Observers,
    report: FaultReport,
    progress: Callable[[str], None],
) -> None:
    """Hold the ledger against the log, audit every table, compare projection and rebuild."""
    jetstream, names = connection.jetstream, stack.log_names
    last_sequence = (await jetstream.stream_info(names.stream)).state.last_seq or 0
    progress(f"waiting for the projection to reach the end of the log ({last_sequence}) ...")
    if await observers.position.wait_for(last_sequence, CATCH_UP_LIMIT_SECONDS) is None:
        report.error = f"the projection did not reach the end of the log ({last_sequence})"
    report.projection_position = await observers.position.read() or 0
    progress("reading the log back, holding it against the clients' ledger, auditing ...")
    logs = await read_tables(connection, names, last_sequence)
    ledger = observers.ledger
    findings = check_log(ledger.acked, logs)
    report.moves_acknowledged = findings.acknowledged
    report.lost_moves = findings.lost
    report.misreported_versions = findings.misreported
    report.duplicate_commands = findings.duplicate_commands
    report.repeated_versions = findings.repeated_versions
    report.version_gaps = findings.version_gaps
    report.examples = findings.examples
    report.retried_calls = dict(ledger.retried)
    report.refused_calls = dict(ledger.refused)
    report.clients_gave_up = ledger.gave_up
    report.log_messages = sum(len(batches) for batches in logs.values())
    for table_id, batches in logs.items():
        events = [event for stored in batches for event in stored.batch.events]
        report.games_started += any(event.HasField("game_started") for event in events)
        report.games_finished += any(event.HasField("game_finished") for event in events)
        audit = await asyncio.to_thread(
            partial(audit_log, verifier=stack.log_keys.verifier), table_id, batches
        )
        report.tables_audited += 1
        if not audit.ok:
            first = audit.first
            report.audit_failures.append(f"audit of {table_id}: {first}")
    progress("rebuilding the projection from the log and comparing ...")
    await rebuild(
        stack.postgres.url,
        jetstream,
        names,
        schema=REBUILD_SCHEMA,
        reader_nats_url=stack.nats_url,
        verifier=stack.log_keys.verifier,
    )
    async with pool.acquire() as database:
        comparisons = await compare_projections(database, LIVE_SCHEMA, REBUILD_SCHEMA)
        report.dead_letters = int(await database.fetchval("SELECT count(*) FROM dead_letters"))
    report.projection_equals_rebuild = all(table.identical for table in comparisons)
    for table in comparisons:
        report.projection_differences.extend(table.examples)


async def read_tables(
    connection: NatsConnection, names: LogNames, last_sequence: int
) -> dict[str, list[StoredBatch]]:
    """Every table's batches up to ``last_sequence``, read in one pass over the stream."""
    logs: dict[str, list[StoredBatch]] = defaultdict(list)
    if not last_sequence:
        return logs
    reading = read_log(connection.jetstream, names, until=last_sequence, chunk=1000)
    async with contextlib.aclosing(reading) as chunks:
        async for chunk in chunks:
            for message in chunk:
                batch = events_pb2.EventBatch()
                batch.ParseFromString(message.data)
                table_id = names.table_id_of(message.subject) or batch.table_id
                logs[table_id].append(
                    StoredBatch(
                        batch=batch,
                        sequence=message.sequence,
                        payload=message.data,
                        headers=message.headers,
                    )
                )
    return logs
