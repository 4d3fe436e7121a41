"""The interval for pooled runs holds its chance however often it is looked at."""

from __future__ import annotations

import doctest
import math
import random

from cardtable_tools import anytime
from cardtable_tools.anytime import anytime_interval, anytime_margin
from cardtable_tools.tournament import t_quantile

LOOKS = range(10, 1001)


def misses_at_some_look(rng: random.Random, margin_at: dict[int, float]) -> bool:
    """Whether a sample of mean zero, looked at after every value from the tenth on, ever has
    an interval (``margin_at[n]`` times its spread) that leaves zero out."""
    total = squares = 0.0
    for count in range(1, LOOKS[-1] + 1):
        value = rng.gauss(0.0, 1.0)
        total += value
        squares += value * value
        if count in margin_at:
            mean = total / count
            spread = math.sqrt(max(squares - count * mean * mean, 0.0) / (count - 1))
            if abs(mean) > margin_at[count] * spread:
                return True
    return False


def test_looking_after_every_value_keeps_the_anytime_interval_at_its_chance() -> None:
    """A thousand looks: the fixed-size 95% interval leaves the true mean out at one of them
    far more often than one time in twenty; the anytime one does not."""
    rng = random.Random(5)
    fixed = {count: t_quantile(count - 1) / math.sqrt(count) for count in LOOKS}
    anytime_margins = {count: anytime_margin(count, 1.0) for count in LOOKS}
    samples = 400
    fixed_misses = sum(misses_at_some_look(rng, fixed) for _ in range(samples))
    anytime_misses = sum(misses_at_some_look(rng, anytime_margins) for _ in range(samples))
    assert fixed_misses / samples > 0.2
    # 5% at most, give or take two standard errors of a share over 400 samples
    assert anytime_misses / samples <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / samples)


def test_the_interval_is_centred_on_the_mean_and_narrows_with_more_values() -> None:
    values = [random.Random(index).gauss(2.0, 3.0) for index in range(400)]
    low, high = anytime_interval(values)
    assert math.isclose((low + high) / 2, sum(values) / len(values))
    shorter = anytime_interval(values[:100])
    assert high - low < shorter[1] - shorter[0]
    # wider than the fixed-size interval of as many values, by about half near the plan
    fixed = 2 * t_quantile(len(values) - 1) * 3.0 / math.sqrt(len(values))
    assert 1.3 < (high - low) / fixed < 1.8


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(anytime).failed == 0
