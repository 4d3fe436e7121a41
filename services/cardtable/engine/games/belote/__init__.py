"""Belote: its rules, phases, determinization view and replay descriptions."""

from __future__ import annotations

from cardtable.engine.definition import GameDefinition
from cardtable.engine.games.belote.narration import BeloteNarration
from cardtable.engine.games.belote.phases import Phase
from cardtable.engine.games.belote.rules import (
    BELOTE,
    BeloteScored,
    CapotMade,
    ContractSettled,
    DealThrownIn,
    TrumpBidMade,
    TurnedCardTaken,
)
from cardtable.engine.games.belote.view import BeloteView

GAME = GameDefinition(
    spec=BELOTE,
    phases=Phase,
    view=BeloteView(),
    narration=BeloteNarration,
    facts=(
        TrumpBidMade,
        TurnedCardTaken,
        DealThrownIn,
        BeloteScored,
        CapotMade,
        ContractSettled,
    ),
)
