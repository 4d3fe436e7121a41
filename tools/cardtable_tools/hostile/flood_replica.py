"""The table-service replica that quota floods go to: its limits, and what it counts.

Floods run against a replica of their own, on the same event log as the one the other kinds
use. Its quotas are the site's rate limit and caps small enough that a flood passes them in
a few calls; the other replica lifts the per-player rate (``MACHINE_SPEED_PLAYERS``), so a
player whose seat the other kinds target many times a second is never throttled into answers
their kinds do not expect, and no flood's empty bucket or held stream is ever seen by them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from cardtable.table_service.quotas import DEFAULT_QUOTAS
from cardtable_tools.bench.scrape import sample_sum, scrape_metrics

#: The watch-stream methods, whose streams in flight are counted by the gRPC server metrics.
WATCH_METHODS = ("WatchTable", "WatchTurns")
REFUSALS = "cardtable_table_quota_refusals_total"
#: How long closed streams may take to be given back before the replica is said to leak them.
RELEASE_SECONDS = 10.0


@dataclass(frozen=True)
class FloodLimits:
    """The quotas of the flood replica: the site's rate, and caps a flood passes cheaply."""

    mutations_per_second: int = int(DEFAULT_QUOTAS.mutations_per_second)
    mutation_burst: int = DEFAULT_QUOTAS.mutation_burst
    open_tables_per_player: int = 3
    #: Honoured by services that have the seat quota; others ignore the setting.
    seats_per_player: int = 3
    watches_per_player: int = 2
    anonymous_watches_per_replica: int = 2
    watches_per_replica: int = 5
    #: False lifts every quota on the replica while the floods still expect them: how a test
    #: shows that a flood notices a quota that is not there.
    enabled: bool = True

    def environment(self) -> dict[str, str]:
        """The table service's settings for these limits."""
        return {
            "QUOTAS_ENABLED": "true" if self.enabled else "false",
            "MUTATIONS_PER_SECOND": str(self.mutations_per_second),
            "MUTATION_BURST": str(self.mutation_burst),
            "OPEN_TABLES_PER_PLAYER": str(self.open_tables_per_player),
            "SEATS_PER_PLAYER": str(self.seats_per_player),
            "WATCHES_PER_PLAYER": str(self.watches_per_player),
            "ANONYMOUS_WATCHES_PER_REPLICA": str(self.anonymous_watches_per_replica),
            "WATCHES_PER_REPLICA": str(self.watches_per_replica),
        }


@dataclass(frozen=True)
class FloodReplica:
    """Where the flood replica answers, where it exposes its metrics, and its limits."""

    address: str
    metrics_port: int
    limits: FloodLimits = field(default_factory=FloodLimits)

    async def refusals(self, limit: str) -> float:
        """``cardtable_table_quota_refusals_total{limit}`` now."""
        return sample_sum(await scrape_metrics(self.metrics_port), REFUSALS, limit=limit)

    async def watches_in_flight(self) -> float:
        """Watch streams the replica has started and not yet ended."""
        text = await scrape_metrics(self.metrics_port)
        started = sum(
            sample_sum(text, "grpc_server_started_total", grpc_method=method)
            for method in WATCH_METHODS
        )
        handled = sum(
            sample_sum(text, "grpc_server_handled_total", grpc_method=method)
            for method in WATCH_METHODS
        )
        return started - handled

    async def watches_ended(self) -> bool:
        """Whether every watch stream has ended within :data:`RELEASE_SECONDS`.

        A stream's handler gives its quota back before the server counts the stream as
        handled, so once none is in flight, no closed stream still counts against a quota.
        """
        deadline = time.monotonic() + RELEASE_SECONDS
        while await self.watches_in_flight() > 0:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True
