"""The games the engine knows, by name: one line per game package
(docs/architecture.md#adding-a-game)."""

from __future__ import annotations

from cardtable.engine.definition import GameDefinition
from cardtable.engine.errors import InvalidInput
from cardtable.engine.game import GameSpec
from cardtable.engine.games import belote, hearts, three_five_eight, whist

DEFINITIONS: dict[str, GameDefinition] = {
    game.name: game for game in (whist.GAME, three_five_eight.GAME, belote.GAME, hearts.GAME)
}
GAMES: dict[str, GameSpec] = {name: game.spec for name, game in DEFINITIONS.items()}


def game_definition(name: str) -> GameDefinition:
    """Every part of the game called ``name``; raises :class:`InvalidInput` for unknown games."""
    game = DEFINITIONS.get(name.strip().lower())
    if game is None:
        raise InvalidInput(f"unknown game {name!r}: choose one of {', '.join(sorted(DEFINITIONS))}")
    return game


def game_spec(name: str) -> GameSpec:
    """The spec of the game called ``name``; raises :class:`InvalidInput` for unknown games."""
    return game_definition(name).spec
