"""The table service's own Prometheus metrics, beside the per-RPC ones of the platform."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

REJECTION_REASONS = {
    "BadRequestError": "malformed",
    "NotAuthenticatedError": "unauthenticated",
    "PermissionDeniedError": "permission_denied",
    "TableNotFoundError": "not_found",
    "RuleViolationError": "rule_violation",
    "ConcurrencyConflictError": "conflict",
    "DependencyUnavailableError": "unavailable",
    "LogTamperedError": "log_tampered",
}


#: The quota checks counted, by the label they are counted under.
QUOTA_CHECKS = ("mutation_rate", "open_tables_per_player", "watch_streams")


class TableMetrics:
    """Moves applied and commands refused, by reason (low-cardinality labels only)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.quota_refusals = Counter(
            "cardtable_table_quota_refusals_total",
            "Calls refused by a quota or rate limit, by limit (quotas.py)",
            ["limit"],
            registry=registry,
        )
        quota_checks = Counter(
            "cardtable_table_quota_checks_total",
            "Calls checked against a quota, by check (none while quotas are off): beside the "
            "refusals, the share refused; a benchmark's proof that the checks ran",
            ["check"],
            registry=registry,
        )
        # Bound once: a mutating call counts its check on the hot path.
        self._quota_checks = {check: quota_checks.labels(check) for check in QUOTA_CHECKS}
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
        self._quota_checks[check].inc()

    def rejected(self, method: str, error: Exception) -> None:
        self.rejections.labels(method, REJECTION_REASONS.get(type(error).__name__, "other")).inc()
