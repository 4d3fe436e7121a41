"""3-5-8: its rules, phases, determinization view and replay descriptions."""

from __future__ import annotations

from cardtable.engine.definition import GameDefinition
from cardtable.engine.games.three_five_eight.narration import ThreeFiveEightNarration
from cardtable.engine.games.three_five_eight.phases import Phase
from cardtable.engine.games.three_five_eight.rules import (
    THREE_FIVE_EIGHT,
    CardsDiscarded,
    CardsExchanged,
    ContractChosen,
    ExchangesOwed,
    ExchangesSkipped,
    TalonTaken,
)
from cardtable.engine.games.three_five_eight.view import ThreeFiveEightView

GAME = GameDefinition(
    spec=THREE_FIVE_EIGHT,
    phases=Phase,
    view=ThreeFiveEightView(),
    narration=ThreeFiveEightNarration,
    facts=(
        ContractChosen,
        ExchangesOwed,
        CardsExchanged,
        ExchangesSkipped,
        TalonTaken,
        CardsDiscarded,
    ),
)
