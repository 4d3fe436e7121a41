"""Whist's determinization view: where the cards a seat does not see may be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardtable.engine.cards import SUIT_LETTERS, Card, card_texts
from cardtable.engine.games.whist.rules import whist_deck
from cardtable.engine.hidden import (
    STOCK,
    GameView,
    HiddenCards,
    current_trick,
    deal_plays,
    exclude_must_trump,
    exclude_voids,
    finished_tricks,
    first_dealer,
    observed_cards,
    view_snapshot,
)


class WhistView(GameView):
    """Whist: the other hands and the stock (the cards not dealt, under the turned card)."""

    extra_places = (STOCK,)

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        players = int(observation["players"])
        deck = whist_deck(players)
        turned = observed_cards([observation["turned_up"]] if observation.get("turned_up") else [])
        layout.sizes[layout.index(STOCK)] = (
            len(deck) - players * int(observation["cards_each"]) - len(turned)
        )
        plays = deal_plays(observation, self.direction)
        exclude_voids(layout, deck, plays)
        if (observation.get("options") or {}).get("must_trump"):
            trump = SUIT_LETTERS.find(observation["trump"]) if observation["trump"] else -1
            exclude_must_trump(layout, deck, plays, trump)
        seen = [*layout.known[layout.seat], *(play.card for play in plays), *turned]
        return layout.hidden(deck, seen)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        players = int(observation["players"])
        state = {
            "phase": observation["phase"],
            "hands": [card_texts(cards) for cards in places[:players]],
            "turned_up": observation.get("turned_up"),
            "bids": [None if bid is None else int(bid) for bid in observation["bids"]],
            "tricks": [trick["cards"] for trick in finished_tricks(observation)],
            "trick": current_trick(observation),
        }
        return view_snapshot(observation, first_dealer(observation, 1), state)
