"""The weights of worlds drawn uniformly and weighed by importance: their likelihood, tempered.

A search that weighs its worlds by what the others decided (:mod:`cardtable.bots.beliefs`) can
keep one world of a few drawn in proportion to their likelihood, or keep every world drawn and
weigh its value by the likelihood (self-normalised importance sampling). The second follows
the whole likelihood for one draw a world, where keeping one of two follows a little of it;
but a few likely worlds then carry most of the weight. The likelihood is raised to a power
below 1 to spread it: the worlds it leaves count more, and the model behind it (the others
play as the rule-based player) is only roughly true of a searching player.

>>> weights = WorldWeights(0.5)
>>> for log in (0.0, 2.0, -2.0):
...     weights.add(log)
>>> [round(weight, 3) for weight in weights]
[0.368, 1.0, 0.135]
>>> round(weights.effective_worlds, 2)
1.96
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import overload

#: The power the likelihood is raised to: in Whist a half leaves a third of the worlds drawn to
#: count and places right most of the cards the whole likelihood does (docs/proving-it.md,
#: "World placement").
DEFAULT_IMPORTANCE_POWER = 0.5


class WorldWeights(Sequence[float]):
    """Each world's weight, ``exp(power × (log-likelihood - the highest so far))``: the
    likeliest world so far weighs 1, so no weight overflows, and adding a likelier world
    rescales the others once."""

    def __init__(self, power: float = DEFAULT_IMPORTANCE_POWER) -> None:
        self.power = power
        self._weights: list[float] = []
        self._top = -math.inf

    def add(self, log_likelihood: float) -> None:
        """Weigh the next world drawn by its log-likelihood."""
        if log_likelihood > self._top:
            if self._weights:
                scale = math.exp(self.power * (self._top - log_likelihood))
                self._weights = [weight * scale for weight in self._weights]
            self._top = log_likelihood
        self._weights.append(math.exp(self.power * (log_likelihood - self._top)))

    @property
    def effective_worlds(self) -> float:
        """How many equally weighted worlds the weights are worth (Kish's effective size)."""
        if not self._weights:
            return 0.0
        return sum(self._weights) ** 2 / sum(weight * weight for weight in self._weights)

    def __len__(self) -> int:
        return len(self._weights)

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[float]: ...
    def __getitem__(self, index: int | slice) -> float | Sequence[float]:
        return self._weights[index]

    def __iter__(self) -> Iterator[float]:
        return iter(self._weights)
