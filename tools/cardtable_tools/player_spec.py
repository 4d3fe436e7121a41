"""A computer player named with options on the command line: ``name:key=value,...``.

The yardsticks weigh a strategy or level against itself with one option changed (hard with the
plain playout, the search without racing); this is how their command lines name such a player.
"""

from __future__ import annotations

from typing import Any


def parse_player(text: str) -> tuple[str, dict[str, Any]]:
    """``name`` or ``name:key=value,key=value`` (numbers and true/false are read as such).

    >>> parse_player("hard:budget_ms=50,adaptive=false")
    ('hard', {'budget_ms': 50.0, 'adaptive': False})
    """
    name, _, rest = text.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            options[key.strip()] = lowered == "true"
        else:
            try:
                options[key.strip()] = float(value)
            except ValueError:
                options[key.strip()] = value.strip()
    return name.strip(), options
