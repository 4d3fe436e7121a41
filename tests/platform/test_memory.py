"""After startup the collector skips what startup made and collects young objects seldom."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cardtable.platform.memory import (
    YOUNG_COLLECTION_THRESHOLD,
    collector_paused,
    garbage_collector_tuned,
    tune_garbage_collector,
)


@pytest.fixture
def collector_restored_afterwards() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector_restored_afterwards")
def test_startup_objects_leave_the_collected_generations() -> None:
    gc.unfreeze()
    kept_alive = [{"startup": number} for number in range(1000)]
    tracked_before = len(gc.get_objects())
    frozen = tune_garbage_collector()
    assert frozen == gc.get_freeze_count() >= len(kept_alive)
    # What the collector still examines is what was made after the freeze.
    assert len(gc.get_objects()) < tracked_before - len(kept_alive)
    assert not any(obj is kept_alive[0] for obj in gc.get_objects())


@pytest.mark.usefixtures("collector_restored_afterwards")
def test_young_collections_wait_for_many_more_allocations() -> None:
    _, older, oldest = gc.get_threshold()
    tune_garbage_collector()
    assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, older, oldest)


def test_a_command_gets_the_collector_back_as_it_was() -> None:
    thresholds = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with garbage_collector_tuned():
        assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0


def test_a_timed_stretch_collects_nothing_until_its_end() -> None:
    collections_seen: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections_seen.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with collector_paused():
            assert not gc.isenabled()
            for _ in range(50_000):  # many times the young threshold of cyclic garbage
                cycle: list[object] = []
                cycle.append(cycle)
            assert collections_seen == []
        assert gc.isenabled()
        assert collections_seen[0] == 2  # one full collection at the end freed the cycles
    finally:
        gc.callbacks.remove(seen)
