"""Auditing a table's log: who wrote it, the log itself (no gap, no duplicate), then its game.

``signatures``
    every batch is signed by a key of the table service's published public keys and names the
    digest of the table's previous batch, so a batch forged without the signing key, altered,
    removed from the middle, reordered or replayed is named (platform/log_signing.py). Batches
    stored before signing began in the stream are accepted as *written before signing* and
    said to be so, never counted as signed. Without public keys this check fails: a chain that
    is not verified proves nothing.
``log``
    versions 1, 2, 3 ... with no gap or duplicate, every batch of this table, every ended
    deal's seed and key published.

The game is checked by :func:`cardtable.replay.audit.audit_record` on the record the log
yields: every action legal, every trick, score and place equal to the engine's, and every
revealed seed reproducing its deck order and matching the commitment published before the
deal. What the audit cannot prove (batches cut off the end of a log, a signing key that was
stolen) is in docs/security.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import SCHEMA_VERSION, StoredBatch
from cardtable.platform.log_signing import BatchVerifier, ChainCheck, LogIntegrityError
from cardtable.replay.audit import PASSED, AuditProblem, AuditReport, audit_record

LOG = "log"
SIGNATURES = "signatures"
NO_KEYS = (
    "no public keys to check the signatures with (LOG_VERIFYING_KEYS, or TABLE_ADDRESS to "
    "ask the table service for them)"
)


def game_started(batches: Sequence[StoredBatch]) -> bool:
    """Whether the log holds the start of a game (a table may wait for players forever)."""
    return any(
        event.HasField("game_started") for stored in batches for event in stored.batch.events
    )


def signature_problems(
    batches: Sequence[StoredBatch], verifier: BatchVerifier | None, signed_from: int
) -> tuple[list[AuditProblem], list[str]]:
    """Every batch that breaks the signed chain, and notes on who signed what."""
    if verifier is None:
        return [AuditProblem(SIGNATURES, NO_KEYS)], []
    chain = ChainCheck(verifier, signed_from)
    problems: list[AuditProblem] = []
    for stored in batches:
        try:
            chain.check(stored.payload, stored.headers, stored.sequence, stored.batch)
        except LogIntegrityError as error:
            problems.append(AuditProblem(SIGNATURES, str(error)))
            chain.restart_after(stored.payload, stored.batch)
    notes = [
        f"{count} batches signed by key {key_id}" for key_id, count in sorted(chain.signers.items())
    ]
    if chain.unsigned:
        notes.append(f"{chain.unsigned} batches written before signing (not signed)")
    return problems, notes


def log_problems(table_id: str, batches: Sequence[StoredBatch]) -> list[AuditProblem]:
    """Gaps, duplicates, foreign batches and unpublished seeds in a table's log, in log order."""
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
    problems.extend(_unrevealed_deals(batches))
    return problems


def _unrevealed_deals(batches: Sequence[StoredBatch]) -> list[AuditProblem]:
    """A deal that has ended (another began, or the game finished) must have its seed and key
    published; without them its cards stay sealed and its shuffle unproven."""
    committed: list[int] = []
    revealed: set[int] = set()
    finished = False
    for stored in batches:
        for event in stored.batch.events:
            if event.HasField("deal_committed"):
                committed.append(event.deal_committed.deal_number)
            elif event.HasField("deal_seed_revealed"):
                revealed.add(event.deal_seed_revealed.deal_number)
            elif event.HasField("game_finished"):
                finished = True
    ended = committed if finished else committed[:-1]
    return [
        AuditProblem(LOG, f"deal {number} has ended but its seed was never revealed")
        for number in ended
        if number not in revealed
    ]


def audit_log(
    table_id: str,
    batches: Sequence[StoredBatch],
    *,
    verifier: BatchVerifier | None,
    signed_from: int = 1,
) -> AuditReport:
    """The full audit of one table's log (module docstring).

    ``verifier`` holds the table service's public keys; ``signed_from`` is the first stream
    sequence whose batches must be signed (the stream records it: ``LogReader.signed_from``).
    A table still waiting for its players has no game to check yet: only its log is audited,
    and the game's checks say "not run".
    """
    problems = log_problems(table_id, batches)
    signing, notes = signature_problems(batches, verifier, signed_from)
    if game_started(batches):
        record = record_from_batches(table_id, [stored.batch for stored in batches])
        report = audit_record(record, require_shuffle_proofs=True)
    else:
        report = AuditReport()
    report.notes.extend(notes)
    report.checks[SIGNATURES] = PASSED
    report.checks[LOG] = PASSED
    for problem in (*signing, *problems):
        report.add(problem)
    return report
