"""Auditing a game record: does every recorded fact follow from the record's inputs?

:func:`audit_record` takes a record as parsed JSON (from a file, or exported from a table's
event log) and runs these checks, each named in the problems it finds:

``format``
    the record reads (any supported version, upgraded in memory), its options are valid and
    every action text parses;
``shuffle``
    each deal's fair-deal proof (``deal["shuffle"]``: ``commitment`` and ``seed``): the seed
    hashes to the commitment and reproduces the deal's deck order
    (:func:`cardtable.engine.shuffle.check_shuffle`);
``rules``
    every input is legal when re-applied through the engine
    (:func:`cardtable.engine.record.verify_record`);
``results``
    every recorded result equals the engine's: tricks (cards, winner, leader), deal scores,
    running totals, deal numbers and dealers, and the final totals, places and end of game.
    ``verify_record`` compares tricks, scores and the final result; the rest is compared here.

Problems are kept in game order, so :attr:`AuditReport.first` is the earliest one: a bad
shuffle proof comes before any action of its deal, a deal's results after its last action, the
final result after every deal. The event-log export adds its own checks (a gap or a duplicate
in the log) by appending problems with :meth:`AuditReport.add`.

>>> from cardtable.engine.registry import game_spec
>>> from cardtable.engine.record import RecordBuilder
>>> builder = RecordBuilder.start(game_spec("hearts"), 4, {"quick": True}, first_dealer=0)
>>> _ = builder.deal(builder.state.deck())
>>> report = audit_record(builder.to_json())
>>> report.ok, report.deals, report.deals_without_proof
(True, 1, 1)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardtable.engine.actions import parse_action
from cardtable.engine.cards import Card
from cardtable.engine.errors import EngineError
from cardtable.engine.facts import DealScored, DealStarted, Fact, TrickWon
from cardtable.engine.record import GameRecord, RecordedDeal, load_record, verify_record
from cardtable.engine.replay import apply_input
from cardtable.engine.shuffle import check_shuffle

FORMAT = "format"
SHUFFLE = "shuffle"
RULES = "rules"
RESULTS = "results"
CHECKS = (FORMAT, SHUFFLE, RULES, RESULTS)
PASSED, FAILED, NOT_RUN, PARTIAL = "passed", "failed", "not run", "partial"

#: Position of a problem found after everything else (the final result), for ordering.
END = 1 << 30
THE_DEAL = -1

_ACTION_LABEL = re.compile(r"^action (\d+)\b")


@dataclass(frozen=True)
class AuditProblem:
    """One mismatch: which check found it, where, and why.

    ``deal`` is the deal's number, ``action`` says where in it (``the deal`` for the deal
    itself, ``action 17 (seat 2: play QS)``), both ``None`` for the final result.
    ``position`` orders problems in game order: (deal index, action index or -1 for the deal,
    ``END`` for the deal's results).
    """

    check: str
    reason: str
    deal: int | None = None
    action: str | None = None
    position: tuple[int, int] = (END, END)

    @property
    def where(self) -> str:
        """``deal 3, action 17 (seat 2: play QS)``, ``deal 3``, ``the final result`` or ``""``."""
        if self.deal is None:
            return "the final result" if self.check in (RULES, RESULTS) else ""
        return f"deal {self.deal}, {self.action}" if self.action else f"deal {self.deal}"

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}" if self.where else self.reason

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "deal": self.deal,
            "action": self.action,
            "reason": self.reason,
        }


@dataclass
class AuditReport:
    """What an audit checked and every problem it found, earliest first."""

    game: str | None = None
    players: int | None = None
    version: int | None = None
    deals: int = 0
    actions: int = 0
    tricks: int = 0
    shuffle_proofs: int = 0
    deals_without_proof: int = 0
    totals: tuple[int, ...] = ()
    places: tuple[int, ...] = ()
    over: bool = False
    #: Each check's outcome: "passed", "failed", "not run" (the record could not be read) or
    #: "partial" (results compared only up to the first input the engine refused).
    checks: dict[str, str] = field(default_factory=lambda: dict.fromkeys(CHECKS, NOT_RUN))
    problems: list[AuditProblem] = field(default_factory=list)
    #: What the audit of a log adds for people: who signed it, what was written before signing.
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> AuditProblem | None:
        """The earliest problem in game order (the first found, among equals)."""
        return min(self.problems, key=lambda problem: problem.position, default=None)

    def add(self, problem: AuditProblem) -> None:
        """Record a problem; its check is then failed."""
        self.problems.append(problem)
        self.checks[problem.check] = FAILED

    def passed(self, check: str) -> None:
        if self.checks.get(check) not in (FAILED, PARTIAL):
            self.checks[check] = PASSED

    def to_json(self) -> dict[str, Any]:
        first = self.first
        return {
            "ok": self.ok,
            "game": self.game,
            "players": self.players,
            "version": self.version,
            "deals": self.deals,
            "actions": self.actions,
            "tricks": self.tricks,
            "shuffle_proofs": self.shuffle_proofs,
            "deals_without_proof": self.deals_without_proof,
            "totals": list(self.totals),
            "places": list(self.places),
            "over": self.over,
            "checks": dict(self.checks),
            "notes": list(self.notes),
            "first_problem": first.to_json() if first else None,
            "problems": [
                problem.to_json()
                for problem in sorted(self.problems, key=lambda problem: problem.position)
            ],
        }


def audit_record(data: Any, *, require_shuffle_proofs: bool = False) -> AuditReport:
    """Audit a record (parsed JSON, any supported version); never raises for a bad record.

    Deals without a shuffle proof are counted, not failed, unless ``require_shuffle_proofs``
    is set or other deals of the same record carry one (a proof missing from one deal only).
    """
    report = AuditReport()
    if isinstance(data, Mapping) and isinstance(data.get("version"), int):
        report.version = data["version"]
    try:
        record = load_record(data)
        deck = record.spec.new_game(record.players, record.options, record.first_dealer).deck()
    except EngineError as error:
        report.add(AuditProblem(FORMAT, f"the record cannot be read: {error}", position=(-1, -1)))
        return report
    report.game, report.players = record.spec.name, record.players
    report.deals = len(record.deals)
    report.actions = sum(len(deal.actions) for deal in record.deals)
    _check_action_texts(record, report)
    _check_shuffles(record, deck, report, require_shuffle_proofs)
    if report.checks[FORMAT] == FAILED:
        return report  # the engine cannot re-apply an action it cannot read
    report.passed(FORMAT)
    if _check_rules_and_results(record, report):
        _check_other_results(record, report)
        report.passed(RULES)
        if report.checks[RULES] == FAILED and report.checks[RESULTS] != FAILED:
            report.checks[RESULTS] = PARTIAL
        report.passed(RESULTS)
    return report


# -- format -------------------------------------------------------------------------------
def _check_action_texts(record: GameRecord, report: AuditReport) -> None:
    for deal_index, deal in enumerate(record.deals):
        for action_index, (seat, text) in enumerate(deal.actions):
            try:
                parse_action(text)
            except EngineError as error:
                report.add(
                    AuditProblem(
                        FORMAT,
                        str(error),
                        deal.number,
                        _action_label(action_index, seat, text),
                        (deal_index, action_index),
                    )
                )
                return


def _action_label(action_index: int, seat: int, text: str) -> str:
    """The same words ``verify_record`` uses for an action."""
    return f"action {action_index + 1} (seat {seat}: {text})"


# -- shuffle ------------------------------------------------------------------------------
def _check_shuffles(
    record: GameRecord, deck: Sequence[Card], report: AuditReport, required: bool
) -> None:
    proofs = [deal.raw.get("shuffle") for deal in record.deals]
    required = required or any(proof is not None for proof in proofs)
    for deal_index, (deal, proof) in enumerate(zip(record.deals, proofs, strict=True)):
        position = (deal_index, THE_DEAL)
        if proof is None:
            report.deals_without_proof += 1
            if required:
                report.add(
                    AuditProblem(
                        SHUFFLE, "the deal has no shuffle proof", deal.number, "the deal", position
                    )
                )
            continue
        reason = _shuffle_problem(proof, deck, deal)
        if reason is None:
            report.shuffle_proofs += 1
        else:
            report.add(AuditProblem(SHUFFLE, reason, deal.number, "the deal", position))
    report.passed(SHUFFLE)


def _shuffle_problem(proof: Any, deck: Sequence[Card], deal: RecordedDeal) -> str | None:
    if not isinstance(proof, Mapping):
        return "the shuffle proof must be an object with a commitment and a seed"
    if isinstance(proof.get("commitment"), str) and "seed" not in proof:
        return "the deal's seed was never revealed, so its commitment proves nothing"
    seed, commitment = proof.get("seed"), proof.get("commitment")
    if not isinstance(seed, str) or not isinstance(commitment, str):
        return "the shuffle proof needs a commitment and a seed, both hex strings"
    try:
        return check_shuffle(seed, commitment, deck, deal.deck)
    except EngineError as error:
        return f"the shuffle proof is malformed: {error}"


# -- rules and results --------------------------------------------------------------------
def _check_rules_and_results(record: GameRecord, report: AuditReport) -> bool:
    """``verify_record``: legal inputs, and tricks, scores and the final result as recorded.

    ``False`` when the record's results are too malformed to compare at all.
    """
    verification = verify_record(record)
    if verification.malformed:
        # A result field of the wrong shape (a trick's cards as a number, say): a hostile or
        # broken record gets a verdict, not a traceback.
        report.add(AuditProblem(FORMAT, f"a recorded result is malformed ({verification.problem})"))
        return False
    report.totals, report.places, report.over = (
        verification.totals,
        verification.places,
        verification.over,
    )
    if verification.ok:
        return True
    reason = verification.problem or "unknown problem"
    action = verification.problem_action
    deal_index = _deal_index(record, verification.problem_deal)
    if deal_index is None:
        report.add(AuditProblem(RESULTS, reason))
    elif action is None:
        report.add(
            AuditProblem(RESULTS, reason, verification.problem_deal, None, (deal_index, END))
        )
    else:
        match = _ACTION_LABEL.match(action)
        action_index = int(match.group(1)) - 1 if match else THE_DEAL
        report.add(
            AuditProblem(
                RULES,
                _with_hint(reason),
                verification.problem_deal,
                action,
                (deal_index, action_index),
            )
        )
    return True


def _deal_index(record: GameRecord, number: int | None) -> int | None:
    if number is None:
        return None
    return next((index for index, deal in enumerate(record.deals) if deal.number == number), None)


def _with_hint(reason: str) -> str:
    """The engine's reason, with what it most likely means for a record."""
    if reason.startswith("it is not your turn") or reason == "the cards are already dealt":
        return f"{reason} (an action is missing or out of order before this one)"
    return reason


def _check_other_results(record: GameRecord, report: AuditReport) -> None:
    """Recorded results ``verify_record`` does not compare: numbers, dealers, leaders, totals.

    Also a result left out where the engine produced one (a deal's tricks, scores or running
    totals, the final totals and places): in a record meant for checking, a missing result is
    as suspicious as a changed one. Stops quietly at an input the engine refuses, which
    ``verify_record`` has already reported.
    """
    deal_facts: list[list[Fact]] = [[] for _ in record.deals]
    state = record.spec.new_game(record.players, record.options, record.first_dealer)
    try:
        for deal_index, _, step in record.inputs():
            deal_facts[deal_index].extend(apply_input(state, step))
    except EngineError:
        return
    for deal_index, (deal, facts) in enumerate(zip(record.deals, deal_facts, strict=True)):
        for reason in _deal_result_problems(deal, facts):
            report.add(AuditProblem(RESULTS, reason, deal.number, None, (deal_index, END)))
    report.tricks = sum(isinstance(fact, TrickWon) for facts in deal_facts for fact in facts)
    if state.is_over():
        result = record.result
        for key in ("totals", "places"):
            if not result.get(key):
                report.add(AuditProblem(RESULTS, f"the record's result has no final {key}"))


def _deal_result_problems(deal: RecordedDeal, facts: Sequence[Fact]) -> list[str]:
    problems: list[str] = []
    raw = deal.raw
    started = next((fact for fact in facts if isinstance(fact, DealStarted)), None)
    if started is not None:
        if "number" in raw and raw["number"] != started.deal_number:
            problems.append(
                f"the deal is recorded as number {raw['number']!r}, "
                f"but it is deal {started.deal_number}"
            )
        if "dealer" in raw and raw["dealer"] != started.dealer:
            problems.append(
                f"the deal records seat {raw['dealer']!r} as dealer, "
                f"but seat {started.dealer} deals it"
            )
    tricks = [fact for fact in facts if isinstance(fact, TrickWon)]
    if tricks and not deal.tricks:
        problems.append(f"the record has no tricks, but {len(tricks)} were played")
    for recorded, actual in zip(deal.tricks, tricks, strict=False):
        leader = recorded.get("leader") if isinstance(recorded, Mapping) else None
        if leader != actual.leader:
            problems.append(
                f"trick {actual.trick_number} is recorded as led by seat {leader!r}, "
                f"but seat {actual.leader} leads it"
            )
    scored = next((fact for fact in facts if isinstance(fact, DealScored)), None)
    if scored is not None:
        thrown_in = not tricks  # a thrown-in Belote deal: the format allows null scores
        if deal.scores is None and not thrown_in:
            problems.append(
                f"the record has no scores, but the engine scores {list(scored.scores)}"
            )
        if "totals" not in raw:
            if not thrown_in:
                problems.append(
                    f"the record has no running totals, but the engine's are {list(scored.totals)}"
                )
        elif raw["totals"] != list(scored.totals):
            problems.append(
                f"the recorded running totals {raw['totals']!r} differ from the engine's "
                f"{list(scored.totals)}"
            )
    return problems
