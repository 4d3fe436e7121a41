"""The fault run: services killed and servers restarted while games run, and nothing is lost.

The short run (one of each fault) is the scenario of ``cardtable bench --faults``; the other
tests show that its checks do fail on a log that lost or duplicated a move, so a clean run
means something.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from cardtable.eventlog.store import StoredBatch
from cardtable_api.events.v1 import events_pb2
from cardtable_tools.bench.fault_checks import AckedMove, check_log
from cardtable_tools.bench.fault_report import RECOVERY_TARGET_SECONDS, FaultReport, Recovery
from cardtable_tools.bench.fault_watch import ProjectionPosition
from cardtable_tools.bench.faults import CLUSTER_FAULTS, FAULTS, keep_logs, run_faults

TABLE = "6f1c1d5e-0000-4000-8000-000000000001"


def stored(sequence: int, version: int, command_id: str) -> StoredBatch:
    batch = events_pb2.EventBatch(table_id=TABLE, command_id=command_id, table_version=version)
    return StoredBatch(batch=batch, sequence=sequence)


def acked(command_id: str, version: int) -> AckedMove:
    return AckedMove(TABLE, command_id, version, acked_at=0.0)


CLEAN_LOG = [stored(1, 1, "create"), stored(2, 2, "join"), stored(3, 3, "move-a")]
#: A guard against a hung run, not a speed target (recoveries are timed inside): a fault run
#: plays, audits and rebuilds a fixed amount of work, which a slow hour stretches past 4 min.
FAULT_RUN_TIMEOUT_S = 480


@pytest.mark.services
@pytest.mark.alone  # each service must be working again within 10 s of its restart
@pytest.mark.timeout(FAULT_RUN_TIMEOUT_S)
async def test_one_of_each_fault_loses_nothing_and_every_service_comes_back() -> None:
    report = await run_faults(tables=6, rounds=1, pause_seconds=1.0, progress=print)
    # Every message names the kept logs: a failed run keeps them, a clean one removes them.
    logs = f"logs: {report.logs}"

    assert report.error == "", logs
    assert report.games_finished > 0, logs
    assert report.moves_acknowledged > 0, logs
    assert report.lost_moves == 0, (report.examples, logs)
    assert report.duplicates == 0 and report.version_gaps == 0, (report.examples, logs)
    assert report.misreported_versions == 0, (report.examples, logs)
    assert report.audit_failures == [], logs
    assert report.projection_equals_rebuild, (report.projection_differences, logs)
    assert report.dead_letters == 0, logs
    assert report.services_died == [], logs
    assert [recovery.fault for recovery in report.recoveries] == [f.target for f in FAULTS], logs
    for recovery in report.recoveries:
        assert recovery.ok, (recovery, logs)  # up and working again within 10 s of the restart
    assert report.ok, logs
    assert report.logs == ""  # a clean run leaves nothing behind


@pytest.mark.alone  # each fault's recovery is timed against 10 s
@pytest.mark.services
@pytest.mark.timeout(FAULT_RUN_TIMEOUT_S)
async def test_a_nats_cluster_loses_its_leaders_and_a_node_and_nothing_is_lost() -> None:
    report = await run_faults(tables=6, rounds=1, pause_seconds=1.0, progress=print, nats_cluster=3)
    logs = f"logs: {report.logs}"

    assert report.error == "", logs
    assert report.games_finished > 0 and report.moves_acknowledged > 0, logs
    assert report.lost_moves == 0, (report.examples, logs)
    assert report.duplicates == 0 and report.version_gaps == 0, (report.examples, logs)
    assert report.misreported_versions == 0, (report.examples, logs)
    assert report.audit_failures == [], logs
    assert report.projection_equals_rebuild, (report.projection_differences, logs)
    assert report.services_died == [], logs
    assert [(r.fault, r.action) for r in report.recoveries] == [
        (f.target, f.action) for f in CLUSTER_FAULTS
    ], logs
    for recovery in report.recoveries:
        assert recovery.server, recovery  # the leader of the moment was found and hit
        assert recovery.server_up_seconds is not None, (recovery, logs)
        for check, seconds in recovery.working_again.items():
            assert seconds is not None, (recovery, logs)
            assert seconds <= RECOVERY_TARGET_SECONDS, (check, recovery, logs)


def test_a_clean_log_with_every_acknowledged_move_passes() -> None:
    findings = check_log([acked("move-a", 3)], {TABLE: CLEAN_LOG})

    assert findings.ok
    assert (findings.acknowledged, findings.lost, findings.duplicate_commands) == (1, 0, 0)


def test_an_acknowledged_move_missing_from_the_log_is_lost() -> None:
    findings = check_log([acked("move-a", 3), acked("move-b", 4)], {TABLE: CLEAN_LOG})

    assert findings.lost == 1
    assert not findings.ok
    assert "move-b" in findings.examples[0]


def test_a_move_acknowledged_on_a_table_without_a_log_is_lost() -> None:
    assert check_log([acked("move-a", 3)], {}).lost == 1


def test_a_command_stored_twice_is_a_duplicate() -> None:
    log = [*CLEAN_LOG, stored(4, 4, "move-a")]

    findings = check_log([acked("move-a", 3)], {TABLE: log})

    assert findings.duplicate_commands == 1
    assert not findings.ok


def test_a_version_stored_twice_and_a_missing_version_are_found() -> None:
    log = [*CLEAN_LOG, stored(4, 3, "move-b"), stored(5, 6, "move-c")]

    findings = check_log([], {TABLE: log})

    assert (findings.repeated_versions, findings.version_gaps) == (1, 2)
    assert not findings.ok


def test_a_reply_reporting_an_earlier_version_than_the_log_is_caught() -> None:
    findings = check_log([acked("move-a", 2)], {TABLE: CLEAN_LOG})

    assert findings.misreported == 1
    assert not findings.ok


def recovery(**changes: object) -> Recovery:
    values: dict[str, object] = {
        "fault": "table",
        "action": "SIGKILL, restart",
        "round": 1,
        "down_seconds": 1.0,
        "server_up_seconds": 2.0,
        "working_again": {"person_move": 2.5},
    }
    values.update(changes)
    return Recovery(**values)  # type: ignore[arg-type]


def test_a_recovery_over_the_target_or_never_fails_the_run() -> None:
    clean = FaultReport(
        tables=2, rounds=1, games_finished=1, projection_equals_rebuild=True,
        recoveries=[recovery()],
    )  # fmt: skip
    assert clean.ok
    assert clean.as_dict()["ok"] is True
    for bad in (
        recovery(server_up_seconds=None),
        recovery(server_up_seconds=10.5),
        recovery(working_again={"person_move": 11.0}),
        recovery(working_again={"person_move": 1.0, "bot_move": None}),
    ):
        assert not bad.ok
        assert not FaultReport(
            tables=2, rounds=1, games_finished=1, projection_equals_rebuild=True,
            recoveries=[bad],
        ).ok  # fmt: skip


def test_a_lost_move_or_a_duplicate_fails_the_run() -> None:
    base = {"tables": 2, "rounds": 1, "games_finished": 1, "projection_equals_rebuild": True}
    assert not FaultReport(**base, recoveries=[recovery()], lost_moves=1).ok  # type: ignore[arg-type]
    assert not FaultReport(**base, recoveries=[recovery()], duplicate_commands=1).ok  # type: ignore[arg-type]
    assert not FaultReport(**base, recoveries=[recovery()], repeated_versions=1).ok  # type: ignore[arg-type]


def test_a_failed_run_keeps_every_log_where_the_report_says(tmp_path: Path) -> None:
    data, logs = tmp_path / "data", tmp_path / "logs"
    data.mkdir()
    logs.mkdir()
    (data / "nats.log").write_text("nats said this")
    (logs / "table.log").write_text("table said that")
    failed = FaultReport(tables=2, rounds=1, error="boom", logs=str(logs))

    keep_logs(data, logs, failed, remove=True)

    assert failed.logs == str(logs)
    assert (logs / "nats.log").read_text() == "nats said this"
    assert (logs / "table.log").exists()


def test_a_clean_run_removes_its_temporary_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    clean = FaultReport(
        tables=2, rounds=1, games_finished=1, projection_equals_rebuild=True,
        recoveries=[recovery()], logs=str(logs),
    )  # fmt: skip

    keep_logs(tmp_path, logs, clean, remove=True)

    assert clean.logs == "" and not logs.exists()


def test_the_projection_is_timed_by_its_own_readings_not_by_when_the_message_was_seen() -> None:
    """The log watch can learn of a message seconds late (its consumer waits out a lost
    server): the time the projection passed it comes from the readings taken meanwhile."""
    position = ProjectionPosition(None, "EVENTS")  # type: ignore[arg-type]  # no reads here
    for at, reading in [(10.0, 5), (10.1, 5), (10.2, 9), (10.3, 8), (10.4, 12)]:
        position.note(at, reading)
    assert position.reached_at(5) == 10.0
    assert position.reached_at(6) == 10.2
    assert position.reached_at(10) == 10.4
    assert position.reached_at(13) is None


async def test_a_pooled_connection_left_unusable_after_a_restart_is_replaced_not_fatal() -> None:
    """After PostgreSQL restarts, asyncpg may find a pooled connection in a state no query can
    run in; the projection watch then reads nothing once and has the pool open fresh
    connections, instead of stopping (which reported the projection as never working again)."""

    class UnusablePool:
        expired = 0

        async def fetchval(self, *args: object) -> int:
            raise asyncpg.InternalClientError("cannot switch to state 12; another operation")

        async def expire_connections(self) -> None:
            self.expired += 1

    pool = UnusablePool()
    watch = ProjectionPosition(pool, "stream")  # type: ignore[arg-type]
    assert await watch.read() is None
    assert pool.expired == 1
