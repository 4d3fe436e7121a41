"""When a pipelined message waits for company: only when calls come often enough to expect some."""

from __future__ import annotations

import pytest

from cardtable.platform import pipeline_client
from cardtable.platform.pipeline_client import Linger


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def calls_apart(linger: Linger, clock: Clock, gap: float, count: int) -> None:
    for _ in range(count):
        clock.now += gap
        linger.arrived()


def test_no_pace_known_means_no_linger() -> None:
    clock = Clock()
    linger = Linger(0.001, clock)
    assert not linger.worth_it
    linger.arrived()  # one call: still no gap to go by
    assert not linger.worth_it


def test_calls_a_few_hundred_microseconds_apart_make_it_linger() -> None:
    clock = Clock()
    linger = Linger(0.001, clock)
    calls_apart(linger, clock, 0.0004, 20)  # 2,500 calls/s: 2.5 expected within 1 ms
    assert linger.worth_it


def test_a_player_alone_does_not_linger() -> None:
    clock = Clock()
    linger = Linger(0.001, clock)
    calls_apart(linger, clock, 0.02, 20)  # 50 calls/s: 0.05 expected within 1 ms
    assert not linger.worth_it


def test_the_pace_follows_the_load_both_ways() -> None:
    clock = Clock()
    linger = Linger(0.001, clock)
    calls_apart(linger, clock, 0.0004, 50)
    assert linger.worth_it
    calls_apart(linger, clock, 0.05, 30)  # the tables went quiet
    assert not linger.worth_it
    calls_apart(linger, clock, 0.0002, 40)  # and busy again
    assert linger.worth_it


def test_one_long_pause_is_soon_forgotten() -> None:
    clock = Clock()
    linger = Linger(0.001, clock)
    calls_apart(linger, clock, 0.0004, 50)
    calls_apart(linger, clock, 3600.0, 1)  # an hour's pause counts as a second's
    calls_apart(linger, clock, 0.0004, 40)
    assert linger.worth_it


def test_a_linger_of_zero_never_waits() -> None:
    linger = Linger(0.0, Clock())
    assert not linger.worth_it


async def test_a_message_waits_only_when_it_is_worth_it(monkeypatch: pytest.MonkeyPatch) -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(pipeline_client.asyncio, "sleep", sleep)
    clock = Clock()
    linger = Linger(0.05, clock)
    await linger.before_message()  # no pace known: at once
    assert waited == []
    calls_apart(linger, clock, 0.001, 10)
    await linger.before_message()
    assert waited == [0.05]
