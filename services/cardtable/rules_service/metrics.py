"""The rules service's own figures: the game states it holds for references, read at scrape
time from the memo (``codec.MEMO``), so the hot path only bumps plain counters."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from cardtable.rules_service.codec import StateMemo


class StateMemoCollector(Collector):
    """``rules_states_held``, ``rules_states_evicted_total`` and
    ``rules_state_references_not_found_total`` of the memo ``memo()`` returns."""

    def __init__(self, memo: Callable[[], StateMemo]) -> None:
        self._memo = memo

    def collect(self) -> Iterator[Metric]:
        memo = self._memo()
        yield GaugeMetricFamily(
            "rules_states_held", "Game states held for references and snapshots.", len(memo)
        )
        yield CounterMetricFamily(
            "rules_states_evicted",
            "States dropped to keep the memo within RULES_STATE_MEMO_SIZE: a climbing count "
            "means tables in play outnumber it, and their moves cost rebuilds.",
            memo.evicted,
        )
        yield CounterMetricFamily(
            "rules_state_references_not_found",
            "References this replica did not hold (NOT_FOUND): the caller rebuilt the state.",
            memo.references_not_found,
        )
