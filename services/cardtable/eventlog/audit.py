"""Auditing a table's log: the log itself (no gap, no duplicate), then the game it records.

The game is checked by :func:`cardtable.replay.audit.audit_record` on the record the log
yields: every action legal, every trick, score and place equal to the engine's, and every
revealed seed reproducing its deck order and matching the commitment published before the
deal.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardtable.eventlog.records import record_from_batches
from cardtable.replay.audit import AuditProblem, AuditReport, audit_record
from cardtable.table_service.store import SCHEMA_VERSION, StoredBatch

LOG = "log"


def game_started(batches: Sequence[StoredBatch]) -> bool:
    """Whether the log holds the start of a game (a table may wait for players forever)."""
    return any(
        event.HasField("game_started") for stored in batches for event in stored.batch.events
    )


def log_problems(table_id: str, batches: Sequence[StoredBatch]) -> list[AuditProblem]:
    """Gaps, duplicates and foreign batches in a table's log, in log order."""
    problems: list[AuditProblem] = []
    expected = 1
    seen_commands: set[str] = set()
    for stored in batches:
        batch = stored.batch
        if batch.table_id != table_id:
            problems.append(
                AuditProblem(
                    LOG, f"batch at sequence {stored.sequence} belongs to {batch.table_id}"
                )
            )
        if batch.schema_version > SCHEMA_VERSION:
            problems.append(
                AuditProblem(
                    LOG, f"batch {batch.table_version} has unknown schema {batch.schema_version}"
                )
            )
        if batch.table_version < expected:
            problems.append(AuditProblem(LOG, f"batch {batch.table_version} appears twice"))
        elif batch.table_version > expected:
            missing = ", ".join(str(version) for version in range(expected, batch.table_version))
            problems.append(AuditProblem(LOG, f"the log is missing batch {missing}"))
        if batch.command_id in seen_commands:
            problems.append(AuditProblem(LOG, f"command {batch.command_id!r} was stored twice"))
        seen_commands.add(batch.command_id)
        expected = max(expected, batch.table_version + 1)
    if not batches:
        problems.append(AuditProblem(LOG, "the table has no events"))
    return problems


def audit_log(table_id: str, batches: Sequence[StoredBatch]) -> AuditReport:
    """The full audit of one table's log.

    A table still waiting for its players has no game to check yet: only its log is audited,
    and the game's checks say "not run".
    """
    problems = log_problems(table_id, batches)
    if game_started(batches):
        record = record_from_batches(table_id, [stored.batch for stored in batches])
        report = audit_record(record, require_shuffle_proofs=True)
    else:
        report = AuditReport()
    for problem in problems:
        report.add(problem)
    if not problems:
        report.checks[LOG] = "passed"
    return report
