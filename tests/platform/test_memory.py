"""Objects alive after startup are frozen: full collections no longer walk them."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cardtable.platform.memory import freeze_startup_objects


@pytest.fixture
def unfrozen_afterwards() -> Iterator[None]:
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_startup_objects_leave_the_collected_generations() -> None:
    gc.unfreeze()
    kept_alive = [{"startup": number} for number in range(1000)]
    tracked_before = len(gc.get_objects())
    frozen = freeze_startup_objects()
    assert frozen == gc.get_freeze_count() >= len(kept_alive)
    # What the collector still examines is what was made after the freeze.
    assert len(gc.get_objects()) < tracked_before - len(kept_alive)
    assert not any(obj is kept_alive[0] for obj in gc.get_objects())
