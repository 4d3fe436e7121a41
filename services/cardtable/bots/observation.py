"""Observations as strategies receive them, made uniform.

Strategies receive the engine's observation dict: in-process, or decoded from the table
service's typed view by the bot service (``cardtable.views.decode``), both with ints. An
observation read from JSON through a ``Struct`` holds every number as a float
(``"seat": 2.0``); strategies call :func:`normalise_observation` first, so that form reads the
same too.

>>> normalise_observation({"seat": 2.0, "bids": [1.0, None], "hand": ["AS"], "ratio": 0.5})
{'seat': 2, 'bids': [1, None], 'hand': ['AS'], 'ratio': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _normalise(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(key): _normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    return value


def normalise_observation(observation: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``observation`` with whole-number floats turned back into ints."""
    return {str(key): _normalise(value) for key, value in observation.items()}


def acting_seat(observation: Mapping[str, Any]) -> int:
    """The seat the observation belongs to, which must be one that may act now."""
    seat = observation.get("seat")
    if seat is None or int(seat) not in [int(other) for other in observation.get("to_act") or []]:
        raise ValueError("the observation is not that of a seat whose turn it is")
    return int(seat)
