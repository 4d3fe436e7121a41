"""What one game registers: every game-specific part the rest of the code asks it for.

A game lives in one package, ``cardtable.engine.games.<game>``, whose ``GAME`` is a
:class:`GameDefinition`; :mod:`cardtable.engine.registry` lists them. Shared code (the
determinization API, replay, the views' readers) finds a game's part here instead of branching
on the game's name, so adding a game touches its folder and the registry's one line
(docs/architecture.md#adding-a-game).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cardtable.engine.game import GameSpec
from cardtable.engine.hidden import GameView
from cardtable.engine.narration import NarrationFactory


@dataclass(frozen=True)
class GameDefinition:
    """One game's parts, each from its own module of the game's package."""

    #: ``rules.py``: name, player counts, options and the state class (the rules themselves).
    spec: GameSpec
    #: ``phases.py``: every value ``state.phase`` takes, ``deal`` and ``over`` included.
    phases: type[StrEnum]
    #: ``view.py``: what a seat's observation hides and where it may be, for the bots' search.
    view: GameView
    #: ``narration.py``: how a replay tells the game's own facts (one instance per replay).
    narration: NarrationFactory
    #: The game's own kinds of fact (``rules.py``), besides the shared ones in engine/facts.py;
    #: each has a typed message in proto/cardtable/events/v1/facts.proto.
    facts: tuple[type, ...]

    @property
    def name(self) -> str:
        return self.spec.name
