"""An interval for a mean that stays valid however often it is looked at: for pooled runs.

A 95% confidence interval is valid for a sample whose size was fixed before it was drawn. A
match-up pooled over runs made one after another, and looked at after each to see whether it
has cleared zero yet, is not such a sample: with enough looks an interval at 95% clears zero
for a difference of zero far more often than one time in twenty. A *confidence sequence* is
an interval at every sample size at once, holding the mean at all of them together with the
chance asked: looking after every run, and stopping when it clears, is then fair.

This one is the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy and
Ramdas ("Time-uniform central limit theory and asymptotic confidence sequences", 2021, the
two-sided normal mixture boundary of Robbins with the sample's own spread): at ``n`` values
of spread ``s`` the mean is within

    s · sqrt(2 (n ρ² + 1) / (n² ρ²) · log(sqrt(n ρ² + 1) / α))

of the sample mean. ``ρ`` fixes where the sequence is narrowest; it must be chosen before the
data, so it is a constant (:data:`PLANNED_VALUES`), not the sample's size. At that size the
interval is about 1.5 times as wide as the fixed-size 95% one: the price of looking as often
as one likes.

>>> low, high = anytime_interval([1.0, 3.0] * 250)
>>> round(low, 3), round(high, 3)
(1.864, 2.136)
>>> anytime_interval([5.0])
(-inf, inf)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

#: The number of values (a match-up's boards) at which the interval is made narrowest: about
#: what a match-up pooled over several long runs reaches.
PLANNED_VALUES = 500
#: The chance that the interval misses the mean at any size at all.
ALPHA = 0.05


def mixture_precision(planned: int = PLANNED_VALUES, alpha: float = ALPHA) -> float:
    """``ρ²`` making the boundary narrowest near ``planned`` values (the closed form the
    paper gives for the exact optimum's solution)."""
    log_term = -2 * math.log(alpha)
    return (log_term + math.log(log_term + 1)) / planned


def anytime_margin(
    count: int, spread: float, planned: int = PLANNED_VALUES, alpha: float = ALPHA
) -> float:
    """How far from the sample mean of ``count`` values of standard deviation ``spread``
    the mean may be, at every ``count`` together with chance ``1 - alpha``."""
    rho2 = mixture_precision(planned, alpha)
    scaled = count * rho2 + 1
    return spread * math.sqrt(2 * scaled / (count**2 * rho2) * math.log(math.sqrt(scaled) / alpha))


def anytime_interval(
    values: Sequence[float], planned: int = PLANNED_VALUES, alpha: float = ALPHA
) -> tuple[float, float]:
    """The confidence sequence's interval for the mean of ``values`` (unbounded for fewer
    than two: there is no spread to go by)."""
    if len(values) < 2:
        return -math.inf, math.inf
    mean = statistics.fmean(values)
    margin = anytime_margin(len(values), statistics.stdev(values), planned, alpha)
    return mean - margin, mean + margin
