"""Hearts: its rules, phases, determinization view and replay descriptions."""

from __future__ import annotations

from cardtable.engine.definition import GameDefinition
from cardtable.engine.games.hearts.narration import HeartsNarration
from cardtable.engine.games.hearts.phases import Phase
from cardtable.engine.games.hearts.rules import (
    HEARTS,
    CardsPassed,
    MoonShot,
    PassChosen,
    PassingAnnounced,
)
from cardtable.engine.games.hearts.view import HeartsView

GAME = GameDefinition(
    spec=HEARTS,
    phases=Phase,
    view=HeartsView(),
    narration=HeartsNarration,
    facts=(
        PassingAnnounced,
        PassChosen,
        CardsPassed,
        MoonShot,
    ),
)
