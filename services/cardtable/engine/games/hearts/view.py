"""Hearts' determinization view: where the cards a seat does not see may be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardtable.engine.cards import FULL_DECK, HEARTS, SUIT_OF, Card, card_texts
from cardtable.engine.games.hearts.phases import Phase
from cardtable.engine.games.hearts.rules import PASS_DIRECTION_NAMES, PLAYERS, QUEEN_OF_SPADES
from cardtable.engine.hidden import (
    GameView,
    HiddenCards,
    current_trick,
    deal_plays,
    exclude_voids,
    finished_tricks,
    first_dealer,
    observed_cards,
    observer_seat,
    player_to_act,
    suit_cards,
    view_snapshot,
)

_HEARTS_OFFSETS = {name: offset for offset, name in PASS_DIRECTION_NAMES.items()}


class HeartsView(GameView):
    """Hearts: the other three hands; the cards a seat passed sit with their receiver."""

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        deck = FULL_DECK
        plays = deal_plays(observation, self.direction)
        played = {play.card for play in plays}
        if observation["phase"] == Phase.PLAY:
            receiver = (seat + _HEARTS_OFFSETS[observation["pass_direction"]]) % PLAYERS
            passed = [card for card in observed_cards(observation["passed"]) if card not in played]
            if receiver != seat:
                layout.known[receiver].extend(passed)
        exclude_voids(layout, deck, plays)
        non_hearts = [card for card in deck if SUIT_OF[card] != HEARTS]
        unsafe = {*suit_cards(deck, HEARTS), QUEEN_OF_SPADES}
        broken = False
        for play in plays:
            suit = SUIT_OF[play.card]
            # Leading a heart before hearts are broken: the leader held only hearts.
            if not play.trick and suit == HEARTS and not broken:
                layout.exclude(play.seat, non_hearts)
            # A heart or the queen of spades on the first trick: the player had nothing else.
            if (
                play.trick_number == 0
                and play.trick
                and suit != SUIT_OF[play.trick[0]]
                and play.card in unsafe
            ):
                layout.exclude(play.seat, [card for card in deck if card not in unsafe])
            broken = broken or suit == HEARTS
        seen = [*layout.known[seat], *played]
        return layout.hidden(deck, seen)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        seat = observer_seat(observation)
        phase = observation["phase"]
        offset = _HEARTS_OFFSETS[observation["pass_direction"]]
        # Passes another seat chose are hidden. Once play starts they are over (marked chosen,
        # cards unknown); during the pass phase they are left to be chosen again.
        passes: list[list[str] | None] = [
            [] if offset and phase == Phase.PLAY else None for _ in range(PLAYERS)
        ]
        received: list[list[str]] = [[] for _ in range(PLAYERS)]
        if observation.get("passed"):
            passes[seat] = list(observation["passed"])
        if phase == Phase.PLAY:
            received[seat] = list(observation.get("received") or [])
        state = {
            "phase": phase,
            "hands": [card_texts(cards) for cards in places[:PLAYERS]],
            "pass_offset": offset,
            "passes": passes,
            "received": received,
            "trick": current_trick(observation),
            "leader": int(observation.get("leader") or 0),
            "player": player_to_act(observation) if phase == Phase.PLAY else 0,
            "tricks": finished_tricks(observation),
            "hearts_broken": bool(observation["hearts_broken"]),
            "points": [int(points) for points in observation["points"]],
        }
        return view_snapshot(observation, first_dealer(observation, 1), state)
