"""Whist: its rules, phases, determinization view and replay descriptions."""

from __future__ import annotations

from cardtable.engine.definition import GameDefinition
from cardtable.engine.games.whist.narration import WhistNarration
from cardtable.engine.games.whist.phases import Phase
from cardtable.engine.games.whist.rules import WHIST, StreakBonus
from cardtable.engine.games.whist.view import WhistView

GAME = GameDefinition(
    spec=WHIST,
    phases=Phase,
    view=WhistView(),
    narration=WhistNarration,
    facts=(StreakBonus,),
)
