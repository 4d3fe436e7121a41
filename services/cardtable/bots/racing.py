"""Which candidates are still in the race: the search's test for dropping a clearly worse move.

Every candidate of a move meets the same worlds, so two candidates are compared world by world
(paired differences): the noise of the draw, which dwarfs most differences between moves,
cancels. A candidate leaves the race once its mean shortfall against the leader is more than
:data:`DROP_Z` standard errors of that mean, after at least :data:`MIN_WORLDS` worlds. Two
candidates equal in every world so far (two touching cards, whose playouts go the same way)
are one: the later one leaves.

Most moves of a deal are clear (one card keeps the queen safe, one wins the trick the contract
needs) and their race ends after a handful of worlds, which the search then spends on the
close moves (:mod:`cardtable.bots.budget`).

>>> still_in_race([0, 1, 2], [[1.0] * 10, [0.0] * 10, [1.0] * 10])
[0]
>>> still_in_race([0, 1], [[1.0, 0.0] * 5, [0.0, 1.0] * 5])
[0, 1]

Worlds weighed by importance (``bots/beliefs.py``) carry a weight each: then the means are
weighted, and so is the standard error (:func:`clearly_ahead`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Each world's weight, in the order the worlds were drawn; None when all weigh the same.
Weights = Sequence[float] | None

#: Standard errors of its mean shortfall behind the leader that drop a candidate: a wrong drop
#: costs a move's worth; the z is high because the test is repeated after every world.
DROP_Z = 2.5
#: Worlds every candidate meets before any leaves the race: scores are few distinct values
#: (tricks, points), and over six worlds two moves that part in one world in ten often look
#: equal (docs/proving-it.md, "Settings the figures chose").
MIN_WORLDS = 10


def weighted_sum(values: Sequence[float], weights: Weights) -> float:
    """``values`` summed, each times its world's weight (all 1 when ``weights`` is None)."""
    if weights is None:
        return sum(values)
    return sum(value * weight for value, weight in zip(values, weights, strict=True))


def leader(alive: Sequence[int], values: Sequence[Sequence[float]], weights: Weights = None) -> int:
    """The candidate with the best total so far, weighted; the earliest wins a tie (it is the
    rule-based choice, which the search puts first).

    >>> leader([0, 1], [[1.0, 0.0], [0.0, 2.0]]), leader([0, 1], [[1.0, 0.0], [0.0, 2.0]], [3, 1])
    (1, 0)
    """
    return max(alive, key=lambda index: (weighted_sum(values[index], weights), -index))


def still_in_race(
    alive: Sequence[int],
    values: Sequence[Sequence[float]],
    drop_z: float = DROP_Z,
    min_worlds: int = MIN_WORLDS,
    weights: Weights = None,
) -> list[int]:
    """The candidates of ``alive`` not clearly behind the leader. ``values[i]`` holds candidate
    ``i``'s value in each world so far; every candidate in ``alive`` has met the same worlds."""
    best = leader(alive, values, weights)
    worlds = len(values[best])
    if worlds < min_worlds:
        return list(alive)
    kept = []
    for index in alive:
        if index == best:
            kept.append(index)
            continue
        # Equal in every world: the two play out the same, and the later one leaves.
        same = values[best] == values[index]
        if not (same or clearly_ahead(values[best], values[index], drop_z, weights)):
            kept.append(index)
    return kept


def clearly_ahead(
    ahead: Sequence[float], behind: Sequence[float], z: float, weights: Weights = None
) -> bool:
    """Whether ``ahead`` beats ``behind`` by more than ``z`` standard errors of their mean
    difference, world by world (both met the same worlds; one world proves nothing). With
    ``weights`` the mean is weighted and its standard error is the self-normalised
    importance sampling one, ``sqrt(sum(w² (d - mean)²)) / sum(w)``.

    >>> clearly_ahead([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], 2.5)
    True
    >>> clearly_ahead([1.0, 0.0], [0.0, 1.0], 0.5)
    False
    >>> clearly_ahead([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], 0.5, [1.0, 1.0, 1.0])
    True
    >>> clearly_ahead([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], 0.5, [0.1, 5.0, 0.1])
    False
    """
    worlds = len(ahead)
    if worlds < 2:
        return False
    difference = [first - second for first, second in zip(ahead, behind, strict=True)]
    if weights is None:
        mean = sum(difference) / worlds
        # statistics.stdev is exact but costs a tenth of a move's CPU when run every world
        spread = math.sqrt(sum((value - mean) ** 2 for value in difference) / (worlds - 1))
        error = spread / math.sqrt(worlds)
    else:
        total = sum(weights)
        mean = weighted_sum(difference, weights) / total
        pairs = zip(difference, weights, strict=True)
        squares = sum((weight * (value - mean)) ** 2 for value, weight in pairs)
        error = math.sqrt(squares) / total
    if error == 0:  # a constant difference is certain
        return mean > 0
    return mean > z * error
