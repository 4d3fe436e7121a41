"""The games the engine knows, by name."""

from __future__ import annotations

from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import GameSpec
from cardtable.engine.games.belote.rules import BELOTE
from cardtable.engine.games.hearts.rules import HEARTS
from cardtable.engine.games.three_five_eight.rules import THREE_FIVE_EIGHT
from cardtable.engine.games.whist.rules import WHIST

GAMES: dict[str, GameSpec] = {spec.name: spec for spec in (WHIST, THREE_FIVE_EIGHT, BELOTE, HEARTS)}


def game_spec(name: str) -> GameSpec:
    """The spec of the game called ``name``; raises :class:`InvalidInput` for unknown games."""
    spec = GAMES.get(name.strip().lower())
    if spec is None:
        raise InvalidInput(f"unknown game {name!r}: choose one of {', '.join(sorted(GAMES))}")
    return spec
