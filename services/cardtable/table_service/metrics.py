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
}


class TableMetrics:
    """Moves applied and commands refused, by reason (low-cardinality labels only)."""

    def __init__(self, registry: CollectorRegistry) -> None:
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

    def rejected(self, method: str, error: Exception) -> None:
        self.rejections.labels(method, REJECTION_REASONS.get(type(error).__name__, "other")).inc()
