"""What a fault run must never see: an acknowledged move missing from the log, or a duplicate.

The clients of a fault run write down every MakeMove the table service acknowledged (table,
command id, the version the reply reported). Afterwards the whole log is read back and
compared with that ledger here, with no service involved, so the checks can be fed a
doctored log to show that they do fail when they should:

>>> from cardtable.eventlog.store import StoredBatch
>>> from cardtable_api.events.v1 import events_pb2
>>> def stored(sequence, version, command):
...     batch = events_pb2.EventBatch(table_id="t", command_id=command, table_version=version)
...     return StoredBatch(batch=batch, sequence=sequence)
>>> log = {"t": [stored(1, 1, "create"), stored(2, 2, "move-1"), stored(3, 2, "move-1")]}
>>> findings = check_log([AckedMove("t", "move-1", 2, 0.0), AckedMove("t", "move-2", 3, 0.0)], log)
>>> findings.lost, findings.duplicate_commands, findings.repeated_versions, findings.ok
(1, 1, 1, False)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cardtable.eventlog.store import StoredBatch

#: Examples kept per finding: enough to start looking, few enough for a report.
EXAMPLES = 5


@dataclass(frozen=True)
class AckedMove:
    """A MakeMove the table service answered with OK, as the client saw it."""

    table_id: str
    command_id: str
    #: The table version the reply reported (at least the version of the move's batch).
    version: int
    #: Wall-clock time (``time.time()``) the reply arrived, to compare with log timestamps.
    acked_at: float


@dataclass
class LogFindings:
    """Counts of everything that went wrong between the clients' ledger and the log."""

    acknowledged: int = 0
    #: Acknowledged moves whose command id is nowhere in their table's log.
    lost: int = 0
    #: Acknowledged moves whose reply reported a version below the one the log gave the move.
    misreported: int = 0
    #: One command id stored in more than one message of a table's log.
    duplicate_commands: int = 0
    #: One table version stored in more than one message.
    repeated_versions: int = 0
    #: Table versions missing between the first and the last message of a table.
    version_gaps: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing lost, nothing twice, nothing missing, no reply that lied about its version."""
        return not (
            self.lost
            or self.misreported
            or self.duplicate_commands
            or self.repeated_versions
            or self.version_gaps
        )

    def note(self, example: str) -> None:
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)


def check_log(acked: Sequence[AckedMove], logs: Mapping[str, Sequence[StoredBatch]]) -> LogFindings:
    """Compare the acknowledged moves with the tables' logs (each in sequence order)."""
    findings = LogFindings(acknowledged=len(acked))
    versions_by_command: dict[tuple[str, str], int] = {}
    for table_id, batches in logs.items():
        _check_table(table_id, batches, findings)
        for stored in batches:
            versions_by_command.setdefault(
                (table_id, stored.batch.command_id), stored.batch.table_version
            )
    for move in acked:
        logged_version = versions_by_command.get((move.table_id, move.command_id))
        if logged_version is None:
            findings.lost += 1
            findings.note(f"lost: move {move.command_id} of table {move.table_id} (acknowledged)")
        elif move.version < logged_version:
            findings.misreported += 1
            findings.note(
                f"misreported: move {move.command_id} of table {move.table_id} acknowledged at "
                f"version {move.version}, stored as version {logged_version}"
            )
    return findings


def _check_table(table_id: str, batches: Sequence[StoredBatch], findings: LogFindings) -> None:
    """Duplicated command ids and versions, and gaps, within one table's log."""
    commands = Counter(stored.batch.command_id for stored in batches)
    for command_id, count in commands.items():
        if count > 1:
            findings.duplicate_commands += count - 1
            findings.note(f"duplicate: command {command_id} stored {count}x in table {table_id}")
    versions = Counter(stored.batch.table_version for stored in batches)
    for version, count in versions.items():
        if count > 1:
            findings.repeated_versions += count - 1
            findings.note(f"duplicate: version {version} stored {count}x in table {table_id}")
    if versions:
        missing = [v for v in range(1, max(versions) + 1) if v not in versions]
        findings.version_gaps += len(missing)
        if missing:
            findings.note(f"gap: table {table_id} lacks versions {missing[:10]}")
