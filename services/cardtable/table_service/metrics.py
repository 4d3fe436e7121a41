"""The table service's own Prometheus metrics, beside the per-RPC ones of the platform."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

REJECTION_REASONS = {
    "BadRequestError": "malformed",
    "NotAuthenticatedError": "unauthenticated",
    "PermissionDeniedError": "permission_denied",
    "TableNotFoundError": "not_found",
    "RuleViolationError": "rule_violation",
    "ConcurrencyConflictError": "conflict",
    "DependencyUnavailableError": "unavailable",
    "GameStateLostError": "unavailable",
    "LogTamperedError": "log_tampered",
}


#: The quota checks counted, by the label they are counted under.
QUOTA_CHECKS = ("mutation_rate", "open_tables_per_player", "seats_per_player", "watch_streams")


class QuotaCheckCounts(Collector):
    """``cardtable_table_quota_checks_total{check}``: calls checked against a quota (none
    while quotas are off); beside the refusals, the share refused, and a benchmark's proof
    that the checks ran.

    Every mutating call counts one, so the counts are plain integers, read when the metrics
    are scraped: a ``Counter`` takes a lock for each increment, which costs more than the
    token bucket's own arithmetic. Increments happen on the event loop's thread only.
    """

    def __init__(self) -> None:
        self.counts = dict.fromkeys(QUOTA_CHECKS, 0)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "cardtable_table_quota_checks",
            "Calls checked against a quota, by check (none while quotas are off)",
            labels=["check"],
        )
        for check, count in list(self.counts.items()):
            family.add_metric([check], count)
        yield family


class TableMetrics:
    """Moves applied and commands refused, by reason (low-cardinality labels only)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.quota_refusals = Counter(
            "cardtable_table_quota_refusals_total",
            "Calls refused by a quota or rate limit, by limit (quotas.py)",
            ["limit"],
            registry=registry,
        )
        self._quota_checks = QuotaCheckCounts()
        registry.register(self._quota_checks)
        self.bot_fallback_moves = Counter(
            "cardtable_table_bot_fallback_moves_total",
            "Moves this service made for a computer player's seat that no computer player "
            "took in time: the bot service is short of capacity. Alert on any increase.",
            registry=registry,
        )
        self.moves = Counter(
            "cardtable_moves_total",
            "Moves applied (a player's or a timer's)",
            ["game"],
            registry=registry,
        )
        self.rejections = Counter(
            "cardtable_commands_rejected_total",
            "Commands refused, by reason",
            ["method", "reason"],
            registry=registry,
        )

        self.log_integrity_failures = Counter(
            "cardtable_log_integrity_failures_total",
            "Batches of a table's log that failed verification (forged, altered, reordered, "
            "removed); each makes its table read-only. Alert on any increase.",
            ["reason"],
            registry=registry,
        )

        self.log_signatures = Counter(
            "cardtable_log_signatures_total",
            "Ed25519 signatures made over batches appended (one covers the batches ready "
            "together, log_signing)",
            registry=registry,
        )
        self.log_batches_signed = Counter(
            "cardtable_log_batches_signed_total",
            "Batches signed; divided by cardtable_log_signatures_total, batches per signature",
            registry=registry,
        )

    def log_signed(self, signatures: int, batches: int) -> None:
        self.log_signatures.inc(signatures)
        self.log_batches_signed.inc(batches)

    def log_integrity_failed(self, table_id: str, error: Exception) -> None:
        reason = str(getattr(error, "reason", "unknown"))
        if reason.startswith("signed by unknown key"):
            reason = "unknown_key"
        elif "signature" in reason:
            reason = "bad_signature"
        elif "not signed" in reason:
            reason = "unsigned"
        elif "follow" in reason:
            reason = "broken_chain"
        else:
            reason = "other"
        self.log_integrity_failures.labels(reason).inc()

    def quota_checked(self, check: str) -> None:
        """Count one call checked against the quota ``check`` (one of :data:`QUOTA_CHECKS`)."""
        self._quota_checks.counts[check] += 1

    def rejected(self, method: str, error: Exception) -> None:
        self.rejections.labels(method, REJECTION_REASONS.get(type(error).__name__, "other")).inc()
