"""What a fuzz run found: answers per kind and status code, and everything that went wrong.

The report is the classifier too: :meth:`FuzzReport.record` decides whether an answer was
one a correct service may give, so the test that feeds it a bad answer proves the same code
path that judges a real run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from grpc import StatusCode
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from cardtable.hostile.kinds import KINDS_BY_NAME, NEVER_EXPECTED

MAX_EXAMPLES = 3


@dataclass
class KindTally:
    """The answers to one kind of hostile request."""

    requests: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    unexpected: int = 0
    #: Events the stream gained while a request of this kind was being answered.
    events_appended: int = 0
    examples: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "codes": dict(sorted(self.codes.items())),
            "unexpected": self.unexpected,
            "events_appended": self.events_appended,
            "unexpected_examples": self.examples,
        }


@dataclass
class FuzzReport:
    """Per kind the answers, plus crashes, legitimate traffic and speed."""

    seed: int
    kinds: dict[str, KindTally] = field(default_factory=dict)
    crashes: list[str] = field(default_factory=list)
    health_checks: int = 0
    legitimate_moves: int = 0
    legitimate_events: int = 0
    legitimate_failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Hostile requests per method called, so a run shows which methods it reached.
    methods: Counter[str] = field(default_factory=Counter)

    def record(self, kind: str, method: str, code: StatusCode, details: str, appended: int) -> bool:
        """Count one answer; True when it is one the kind allows and nothing was appended."""
        tally = self.kinds.setdefault(kind, KindTally())
        tally.requests += 1
        self.methods[method] += 1
        tally.codes[code.name] += 1
        tally.events_appended += appended
        allowed = code in KINDS_BY_NAME[kind].expected and code not in NEVER_EXPECTED
        if not allowed:
            tally.unexpected += 1
        if (not allowed or appended) and len(tally.examples) < MAX_EXAMPLES:
            tally.examples.append(
                {
                    "method": method,
                    "code": code.name,
                    "details": details[:300],
                    "events_appended": str(appended),
                }
            )
        return allowed and not appended

    @property
    def requests(self) -> int:
        return sum(tally.requests for tally in self.kinds.values())

    @property
    def unexpected(self) -> int:
        return sum(tally.unexpected for tally in self.kinds.values())

    @property
    def events_appended_by_hostile(self) -> int:
        return sum(tally.events_appended for tally in self.kinds.values())

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        """Every answer allowed, no crash, nothing appended, every legal move accepted."""
        return not (
            self.unexpected
            or self.crashes
            or self.events_appended_by_hostile
            or self.legitimate_failures
        )

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        return {
            "ok": self.ok,
            "seed": self.seed,
            "requests": self.requests,
            "seconds": round(self.seconds, 2),
            "requests_per_second": round(self.requests_per_second, 1),
            "unexpected": self.unexpected,
            "events_appended_by_hostile": self.events_appended_by_hostile,
            "crashes": self.crashes,
            "health_checks": self.health_checks,
            "legitimate": {
                "moves": self.legitimate_moves,
                "events": self.legitimate_events,
                "failures": self.legitimate_failures,
            },
            "kinds": {name: tally.as_dict() for name, tally in sorted(self.kinds.items())},
            "requests_by_method": dict(sorted(self.methods.items())),
        }


def render_fuzz_report(report: FuzzReport) -> RenderableType:
    """A table of kinds and answers, then the verdict and the first unexpected answers."""
    table = Table(box=box.SIMPLE_HEAD, title=f"hostile input, seed {report.seed}")
    table.add_column("kind")
    table.add_column("requests", justify="right")
    table.add_column("answers")
    table.add_column("unexpected", justify="right")
    table.add_column("appended", justify="right")
    for name, tally in sorted(report.kinds.items()):
        answers = ", ".join(f"{code} {count}" for code, count in tally.codes.most_common())
        table.add_row(
            name,
            str(tally.requests),
            Text(answers),
            Text(str(tally.unexpected), style="red" if tally.unexpected else "green"),
            Text(str(tally.events_appended), style="red" if tally.events_appended else "green"),
        )
    verdict = Text(
        f"{'OK' if report.ok else 'FAILED'}: {report.requests} requests in "
        f"{report.seconds:.1f} s ({report.requests_per_second:.0f}/s), "
        f"{report.unexpected} unexpected, {report.events_appended_by_hostile} events appended, "
        f"{len(report.crashes)} crashes, {report.health_checks} health checks; "
        f"{report.legitimate_moves} legal moves appended {report.legitimate_events} events",
        style="bold green" if report.ok else "bold red",
    )
    methods = ", ".join(f"{method} {count}" for method, count in report.methods.most_common())
    lines: list[RenderableType] = [table, verdict, Text(f"methods reached: {methods}")]
    for name, tally in sorted(report.kinds.items()):
        for example in tally.examples:
            lines.append(Text(f"  {name}: {example}", style="red"))
    lines.extend(Text(f"  crash: {crash}", style="red") for crash in report.crashes)
    lines.extend(
        Text(f"  legal move refused: {failure}", style="red")
        for failure in report.legitimate_failures
    )
    return Group(*lines)
