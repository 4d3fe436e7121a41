"""What the projection reports to Prometheus, registered in the registry it is given."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from cardtable.scoring_service.writer import ProjectionOutcome

# From append to commit: tens of milliseconds when keeping up, seconds while catching up.
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ProjectionMetrics:
    """Counters of the live projection; ``observe`` takes each committed outcome."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.batches = Counter(
            "scoring_projected_batches_total",
            "Event batches folded into the projection.",
            registry=registry,
        )
        self.events = Counter(
            "scoring_projected_events_total",
            "Events in the batches folded into the projection.",
            registry=registry,
        )
        self.skipped = Counter(
            "scoring_skipped_batches_total",
            "Batches that changed nothing: redelivered at or below the position, or stored "
            "twice in the log (by table version).",
            ["why"],
            registry=registry,
        )
        self.dead_letters = Counter(
            "scoring_dead_letters_total",
            "Messages set aside in the dead-letter table.",
            registry=registry,
        )
        self.gaps = Counter(
            "scoring_table_version_gaps_total",
            "Batches whose table version skipped some: batches missing from the log.",
            registry=registry,
        )
        self.retries = Counter(
            "scoring_projection_retries_total",
            "Transient failures (PostgreSQL away) after which a batch was tried again.",
            registry=registry,
        )
        self.sequence_reads = Counter(
            "scoring_sequence_reads_total",
            "Messages read by sequence because the durable consumer did not deliver them.",
            registry=registry,
        )
        self.vouched = Counter(
            "scoring_batches_vouched_total",
            "Batches whose signature was not verified on its own: a later batch of the same "
            "table, verified in the same transaction, names its digest (log_signing).",
            registry=registry,
        )
        self.position = Gauge(
            "scoring_projection_position",
            "Stream sequence of the last batch committed.",
            registry=registry,
        )
        self.lag = Histogram(
            "scoring_projection_lag_seconds",
            "Time from a batch's append to the stream until its projection committed.",
            buckets=LAG_BUCKETS,
            registry=registry,
        )

    def observe(self, outcome: ProjectionOutcome, lags: list[float]) -> None:
        """Count one committed run of messages and the lag of each."""
        self.batches.inc(outcome.projected)
        self.events.inc(outcome.events)
        self.vouched.inc(outcome.vouched)
        self.skipped.labels("redelivered").inc(outcome.already_projected)
        self.skipped.labels("duplicate").inc(outcome.duplicates)
        self.dead_letters.inc(len(outcome.dead_letters))
        self.gaps.inc(len(outcome.gaps))
        self.position.set(outcome.position)
        for lag in lags:
            self.lag.observe(lag)
