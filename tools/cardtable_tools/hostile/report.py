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

from cardtable_tools.hostile.kinds import KINDS_BY_NAME, NEVER_EXPECTED

MAX_EXAMPLES = 3


@dataclass(frozen=True)
class FloodCall:
    """One call of a flood, as the flood judged it."""

    method: str
    code: StatusCode
    details: str = ""
    #: Events the stream gained while this call (or the wave of calls it ends) was answered.
    appended: int = 0
    #: The call was within its quota and did what it asked (a table created, a seat taken):
    #: the events it appended are its own, not a refused call's.
    admitted: bool = False
    #: What is wrong beyond the status code (no ``retry-after-ms``, a limit not named, a
    #: quota passed or never reached); None when nothing is.
    problem: str | None = None


@dataclass
class KindTally:
    """The answers to one kind of hostile request."""

    #: Requests of this kind: a flood is one request however many calls it makes.
    requests: int = 0
    #: Calls answered: a flood's calls each, one for any other request.
    calls: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    unexpected: int = 0
    #: Events the stream gained while a request of this kind was being answered.
    events_appended: int = 0
    #: Events appended by flood calls within their quota (tables created, seats taken).
    events_admitted: int = 0
    examples: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "calls": self.calls,
            "codes": dict(sorted(self.codes.items())),
            "unexpected": self.unexpected,
            "events_appended": self.events_appended,
            "events_admitted": self.events_admitted,
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
    #: Calls per method, so a run shows which methods it reached.
    methods: Counter[str] = field(default_factory=Counter)
    #: Requests that were floods (a quota passed by many calls).
    floods: int = 0

    def record(self, kind: str, method: str, code: StatusCode, details: str, appended: int) -> bool:
        """Count one answer; True when it is one the kind allows and nothing was appended."""
        self.kinds.setdefault(kind, KindTally()).requests += 1
        return self._answer(kind, FloodCall(method, code, details, appended))

    def record_flood(self, kind: str, calls: list[FloodCall]) -> bool:
        """Count one flood's calls; True when each is allowed, has no problem, and only the
        admitted ones appended anything."""
        self.kinds.setdefault(kind, KindTally()).requests += 1
        self.floods += 1
        judged = [self._answer(kind, call) for call in calls]
        return all(judged)

    def _answer(self, kind: str, call: FloodCall) -> bool:
        tally = self.kinds.setdefault(kind, KindTally())
        tally.calls += 1
        self.methods[call.method] += 1
        tally.codes[call.code.name] += 1
        own_events = call.admitted and call.code == StatusCode.OK
        hostile_events = 0 if own_events else call.appended
        tally.events_appended += hostile_events
        tally.events_admitted += call.appended - hostile_events
        allowed = (
            call.code in KINDS_BY_NAME[kind].expected
            and call.code not in NEVER_EXPECTED
            and call.problem is None
        )
        if not allowed:
            tally.unexpected += 1
        if (not allowed or hostile_events) and len(tally.examples) < MAX_EXAMPLES:
            example = {
                "method": call.method,
                "code": call.code.name,
                "details": call.details[:300],
                "events_appended": str(hostile_events),
            }
            if call.problem is not None:
                example["problem"] = call.problem[:300]
            tally.examples.append(example)
        return allowed and not hostile_events

    @property
    def requests(self) -> int:
        return sum(tally.requests for tally in self.kinds.values())

    @property
    def calls(self) -> int:
        return sum(tally.calls for tally in self.kinds.values())

    @property
    def events_admitted(self) -> int:
        return sum(tally.events_admitted for tally in self.kinds.values())

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
            "calls": self.calls,
            "floods": self.floods,
            "seconds": round(self.seconds, 2),
            "requests_per_second": round(self.requests_per_second, 1),
            "unexpected": self.unexpected,
            "events_appended_by_hostile": self.events_appended_by_hostile,
            "events_admitted_within_quotas": self.events_admitted,
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
        requests = str(tally.requests)
        if tally.calls != tally.requests:
            requests += f" ({tally.calls} calls)"
        table.add_row(
            name,
            requests,
            Text(answers),
            Text(str(tally.unexpected), style="red" if tally.unexpected else "green"),
            Text(str(tally.events_appended), style="red" if tally.events_appended else "green"),
        )
    verdict = Text(
        f"{'OK' if report.ok else 'FAILED'}: {report.requests} requests "
        f"({report.floods} of them floods; {report.calls} calls) in "
        f"{report.seconds:.1f} s ({report.requests_per_second:.0f}/s), "
        f"{report.unexpected} unexpected, {report.events_appended_by_hostile} events appended, "
        f"{len(report.crashes)} crashes, {report.health_checks} health checks; "
        f"{report.legitimate_moves} legal moves appended {report.legitimate_events} events, "
        f"flood calls within their quotas {report.events_admitted}",
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
