"""Read a service's Prometheus histogram from outside, and its quantiles over a time window.

The benchmark takes the projection lag from the scoring service's own histogram (append to
commit, measured by the consumer): a snapshot before and after a run, the difference is the
run's distribution, and quantiles are interpolated inside buckets as Prometheus'
``histogram_quantile`` does. They are therefore as fine as the buckets, which the report says.
"""

from __future__ import annotations

import asyncio
import math
import time
import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True)
class HistogramSnapshot:
    """Cumulative counts per upper bound (``le``), the last one being +Inf."""

    bounds: tuple[float, ...]
    cumulative: tuple[float, ...]

    @property
    def count(self) -> float:
        return self.cumulative[-1] if self.cumulative else 0.0

    def minus(self, earlier: HistogramSnapshot) -> HistogramSnapshot:
        """The observations made between ``earlier`` and this snapshot."""
        if not earlier.bounds:
            return self
        return HistogramSnapshot(
            self.bounds,
            tuple(
                now - then for now, then in zip(self.cumulative, earlier.cumulative, strict=True)
            ),
        )

    def share_within(self, bound: float) -> float | None:
        """The share of observations at most ``bound``: exact when ``bound`` is a bucket's
        upper bound, else that of the nearest bucket below it; None without observations."""
        if self.count <= 0:
            return None
        within = 0.0
        for upper, cumulative in zip(self.bounds, self.cumulative, strict=True):
            if upper > bound:
                break
            within = cumulative
        return within / self.count

    def quantile(self, share: float) -> float | None:
        """The ``share`` quantile, linear inside its bucket; None without observations."""
        if self.count <= 0:
            return None
        rank = share * self.count
        lower_bound, lower_count = 0.0, 0.0
        for bound, cumulative in zip(self.bounds, self.cumulative, strict=True):
            if cumulative >= rank:
                if math.isinf(bound):
                    return lower_bound  # above the last finite bucket: all we can say
                inside = cumulative - lower_count
                fraction = (rank - lower_count) / inside if inside else 1.0
                return lower_bound + (bound - lower_bound) * fraction
            lower_bound, lower_count = bound, cumulative
        return lower_bound


def to_ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds for a report, to a tenth; None stays None."""
    return None if seconds is None else round(seconds * 1000, 1)


def parse_histogram(text: str, name: str) -> HistogramSnapshot:
    """The histogram ``name`` (without ``_bucket``) from a Prometheus text exposition."""
    for family in text_string_to_metric_families(text):
        if family.name != name:
            continue
        buckets = sorted(
            (float(sample.labels["le"]), sample.value)
            for sample in family.samples
            if sample.name.endswith("_bucket")
        )
        return HistogramSnapshot(
            tuple(bound for bound, _ in buckets), tuple(value for _, value in buckets)
        )
    return HistogramSnapshot((), ())


async def scrape_metrics(metrics_port: int) -> str:
    """Fetch ``/metrics`` on loopback: the Prometheus text exposition."""

    def fetch() -> str:
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            return bytes(response.read()).decode()

    return await asyncio.to_thread(fetch)


async def scrape_histogram(metrics_port: int, name: str) -> HistogramSnapshot:
    """Fetch ``/metrics`` on loopback and parse one histogram from it."""
    return parse_histogram(await scrape_metrics(metrics_port), name)


def sample_sum(text: str, sample: str, **labels: str) -> float:
    """The sum of the samples named ``sample`` (``..._total`` for a counter) whose labels
    include ``labels``, in a Prometheus text exposition; 0 when there are none."""
    return sum(
        value.value
        for family in text_string_to_metric_families(text)
        for value in family.samples
        if value.name == sample
        and all(value.labels.get(key) == wanted for key, wanted in labels.items())
    )


async def histogram_since(
    metrics_port: int,
    name: str,
    before: HistogramSnapshot,
    at_least: int,
    limit_seconds: float = 5.0,
) -> HistogramSnapshot:
    """Observations of ``name`` since ``before``, once ``at_least`` are in (or the limit).

    A service observes just after the work it measures (the scoring service after its
    commit), so a scrape taken as soon as the work is seen done can miss the last few.
    """
    deadline = time.perf_counter() + limit_seconds
    while True:
        since = (await scrape_histogram(metrics_port, name)).minus(before)
        if since.count >= at_least or time.perf_counter() > deadline:
            return since
        await asyncio.sleep(0.05)
