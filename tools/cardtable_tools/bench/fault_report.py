"""The figures of a fault run, whether they meet their targets, and how they print.

Targets (issue #9): no acknowledged move lost, no duplicate in the log, every table's log
audits clean, the live scoring projection equals one rebuilt from the log, at least one game
finished, and after every fault the service is healthy again and the system works again
within ``target_seconds`` of the restart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

#: Seconds from a restart within which the service and the system must work again.
RECOVERY_TARGET_SECONDS = 10.0


@dataclass
class Recovery:
    """One fault: what was done, and how long until things worked again."""

    #: ``table``, ``scoring``, ``bots`` (SIGKILL, then restarted), ``nats``, ``postgres``.
    fault: str
    action: str
    round: int
    #: Seconds between the kill (or stop) and the restart.
    down_seconds: float
    #: From the restart until gRPC health said SERVING (services) or the server was ready
    #: (NATS, PostgreSQL); ``None`` when it never was.
    server_up_seconds: float | None
    #: Per check (``person_move``, ``bot_move``, ``projection``): seconds from the restart
    #: until it was seen working again, ``None`` when it never was within the limit.
    working_again: dict[str, float | None] = field(default_factory=dict)
    target_seconds: float = RECOVERY_TARGET_SECONDS
    note: str = ""
    #: Wall clock: when the fault struck, and when the server was up again.
    faulted_at: float = 0.0
    back_at: float = 0.0
    #: The server hit, when the fault picked one (a cluster's leader of the moment).
    server: str = ""
    #: Moves stored per second ``before`` the fault, ``during`` it (until the server was up
    #: again) and ``after`` (the pause that followed).
    moves_per_second: dict[str, float] = field(default_factory=dict)

    @property
    def working_again_seconds(self) -> float | None:
        """When the last of the checks worked again; ``None`` if one never did."""
        values = list(self.working_again.values())
        if any(value is None for value in values):
            return None
        return max((value for value in values if value is not None), default=0.0)

    @property
    def ok(self) -> bool:
        up, working = self.server_up_seconds, self.working_again_seconds
        return (
            up is not None
            and working is not None
            and up <= self.target_seconds
            and working <= self.target_seconds
        )


@dataclass
class FaultReport:
    """Everything a fault run measured; ``ok`` when every target is met."""

    tables: int
    rounds: int
    #: NATS servers: 1, or a cluster's (its faults are then the cluster's).
    nats_cluster: int = 1
    seconds: float = 0.0
    games_started: int = 0
    games_finished: int = 0
    moves_acknowledged: int = 0
    #: Calls that failed with a retryable status and were tried again (same command id).
    retried_calls: dict[str, int] = field(default_factory=dict)
    #: Calls refused for good (the client's view was stale), by status code.
    refused_calls: dict[str, int] = field(default_factory=dict)
    #: Clients that gave up because a call kept failing past their retry limit.
    clients_gave_up: int = 0
    lost_moves: int = 0
    misreported_versions: int = 0
    duplicate_commands: int = 0
    repeated_versions: int = 0
    version_gaps: int = 0
    log_messages: int = 0
    tables_audited: int = 0
    audit_failures: list[str] = field(default_factory=list)
    projection_position: int = 0
    projection_equals_rebuild: bool = False
    projection_differences: list[str] = field(default_factory=list)
    dead_letters: int = 0
    #: Services whose process exited by itself during the run (none were expected to).
    services_died: list[str] = field(default_factory=list)
    recoveries: list[Recovery] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    error: str = ""
    #: Where the services' and servers' logs are; empty once a clean run removed them.
    logs: str = ""

    @property
    def duplicates(self) -> int:
        return self.duplicate_commands + self.repeated_versions

    @property
    def ok(self) -> bool:
        """Every target met (see the module docstring)."""
        return (
            not self.error
            and self.games_finished > 0
            and self.lost_moves == 0
            and self.misreported_versions == 0
            and self.duplicates == 0
            and self.version_gaps == 0
            and not self.audit_failures
            and self.projection_equals_rebuild
            and self.dead_letters == 0
            and not self.services_died
            and bool(self.recoveries)
            and all(recovery.ok for recovery in self.recoveries)
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able figures, with the derived ones (``ok``, worst recovery) added."""
        figures = asdict(self)
        for recovery, row in zip(self.recoveries, figures["recoveries"], strict=True):
            row["working_again_seconds"] = recovery.working_again_seconds
            row["ok"] = recovery.ok
        figures["duplicates"] = self.duplicates
        figures["ok"] = self.ok
        return figures


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


def _verdict(good: bool) -> Text:
    return Text("ok", style="green") if good else Text("FAILED", style="bold red")


def render_fault_report(report: FaultReport) -> RenderableType:
    """Two tables for a terminal: the recoveries, fault by fault, then the integrity checks."""
    since = "the fault" if report.nats_cluster > 1 else "the restart"
    recoveries = Table(title=f"recovery after each fault (working again: seconds from {since})")
    for column in (
        "round", "fault", "down", "server up", "working again", "checks",
        "moves/s before / during / after", "",
    ):  # fmt: skip
        recoveries.add_column(column)
    for recovery in report.recoveries:
        checks = ", ".join(
            f"{name} {_seconds(value)}" for name, value in recovery.working_again.items()
        )
        server = f" {recovery.server}" if recovery.server else ""
        recoveries.add_row(
            str(recovery.round),
            f"{recovery.fault}{server} ({recovery.action})",
            f"{recovery.down_seconds:.1f} s",
            _seconds(recovery.server_up_seconds),
            _seconds(recovery.working_again_seconds),
            checks + (f"; {recovery.note}" if recovery.note else ""),
            " / ".join(f"{value:.0f}" for value in recovery.moves_per_second.values()),
            _verdict(recovery.ok),
        )
    servers = f", a {report.nats_cluster}-server NATS cluster" if report.nats_cluster > 1 else ""
    integrity = Table(title=f"fault run: {report.tables} tables, {report.rounds} round(s){servers}")
    integrity.add_column("figure")
    integrity.add_column("value", justify="right")
    integrity.add_column("")
    rows: list[tuple[str, str, bool | None]] = [
        ("wall time", f"{report.seconds:.1f} s", None),
        ("games started / finished", f"{report.games_started} / {report.games_finished}",
         report.games_finished > 0),
        ("moves acknowledged", str(report.moves_acknowledged), None),
        ("calls retried (same command id)", _counts(report.retried_calls), None),
        ("calls refused", _counts(report.refused_calls), None),
        ("acknowledged moves lost", str(report.lost_moves), report.lost_moves == 0),
        ("replies with a wrong version", str(report.misreported_versions),
         report.misreported_versions == 0),
        ("duplicate events", str(report.duplicates), report.duplicates == 0),
        ("version gaps", str(report.version_gaps), report.version_gaps == 0),
        ("log messages / tables audited", f"{report.log_messages} / {report.tables_audited}",
         not report.audit_failures),
        ("projection = rebuild from the log", f"at {report.projection_position}",
         report.projection_equals_rebuild),
        ("dead letters", str(report.dead_letters), report.dead_letters == 0),
        ("services that died by themselves", ", ".join(report.services_died) or "none",
         not report.services_died),
    ]  # fmt: skip
    for name, value, good in rows:
        integrity.add_row(name, value, "" if good is None else _verdict(good))
    parts: list[RenderableType] = [recoveries, integrity]
    details = [*report.examples, *report.audit_failures, *report.projection_differences]
    if report.error:
        details.insert(0, f"error: {report.error}")
    if details:
        parts.append(Text("\n".join(details), style="red"))
    if report.logs:
        parts.append(Text(f"logs: {report.logs}"))
    parts.append(Text("all targets met" if report.ok else "TARGETS MISSED", style="bold"))
    return Group(*parts)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{code} {count}" for code, count in sorted(counts.items())) or "0"
