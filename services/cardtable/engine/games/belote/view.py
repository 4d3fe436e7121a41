"""Belote's determinization view: where the cards a seat does not see may be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardtable.engine.cards import SUIT_LETTERS, SUIT_OF, Card, card_texts, parse_card
from cardtable.engine.games.belote.phases import Phase
from cardtable.engine.games.belote.rules import BELOTE, DECK, PLAYERS, STRENGTH, TURNED_INDEX
from cardtable.engine.hidden import (
    STOCK,
    GameView,
    HiddenCards,
    Layout,
    Play,
    current_trick,
    deal_plays,
    finished_tricks,
    first_dealer,
    player_to_act,
    suit_cards,
    view_snapshot,
)


class BeloteView(GameView):
    """Belote: the other hands, and the stock while the bidding lasts.

    The turned card is public; once taken it sits in the taker's hand until played.
    """

    extra_places = (STOCK,)
    direction = BELOTE.direction

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        deck = DECK
        turned = parse_card(observation["turned_card"])
        plays = deal_plays(observation, self.direction)
        played = {play.card for play in plays}
        taker = observation.get("taker")
        if observation["phase"] == Phase.BID:
            layout.sizes[layout.index(STOCK)] = len(deck) - TURNED_INDEX - 1
        elif taker is not None and int(taker) != seat and turned not in played:
            layout.known[int(taker)].append(turned)
        if observation.get("trump"):
            self._exclude_by_play(layout, plays, SUIT_LETTERS.index(observation["trump"]))
        seen = [*layout.known[seat], *played, turned]
        return layout.hidden(deck, seen)

    @staticmethod
    def _exclude_by_play(layout: Layout, plays: list[Play], trump: int) -> None:
        """docs/rules.md, Belote, "Play": what a card played shows about the rest of the hand.

        Not following shows a void. On a trump lead, a trump that does not beat the highest
        shows no higher trump, and no trump at all shows a void in trumps. Void in a plain
        suit led while the partner is not winning, a card that is not a trump shows no trump,
        and a trump under a trump already in the trick shows no higher one.
        """
        strength = STRENGTH[trump]
        deck = DECK
        trumps = suit_cards(deck, trump)
        for play in plays:
            if not play.trick:
                continue
            led = SUIT_OF[play.trick[0]]
            suit = SUIT_OF[play.card]
            best_position = 0
            for position, card in enumerate(play.trick):
                if (
                    SUIT_OF[card] in (led, trump)
                    and strength[card] > strength[play.trick[best_position]]
                ):
                    best_position = position
            best = strength[play.trick[best_position]]
            winner = (play.seat + len(play.trick) - best_position) % PLAYERS
            higher = [card for card in trumps if strength[card] > best]
            if suit != led:
                layout.exclude(play.seat, suit_cards(deck, led))
            if led == trump:
                if suit != trump:
                    layout.exclude(play.seat, trumps)
                elif strength[play.card] < best:
                    layout.exclude(play.seat, higher)
                continue
            if suit == led or winner == (play.seat + 2) % PLAYERS:
                continue
            if suit != trump:
                layout.exclude(play.seat, trumps)
            elif strength[play.card] < best:
                # Only a trump already in the trick can be stronger than a trump.
                layout.exclude(play.seat, higher)

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        phase = observation["phase"]
        stock = places[PLAYERS] if phase == Phase.BID else []
        taker = observation.get("taker")
        state = {
            "phase": phase,
            "hands": [card_texts(cards) for cards in places[:PLAYERS]],
            # The placement's order is the dealing order of the rest of the deck.
            "stock": card_texts(stock),
            "turned_card": observation["turned_card"],
            "bids": [
                {"seat": int(bid["seat"]), "bid": str(bid["bid"])} for bid in observation["bids"]
            ],
            "trump": observation.get("trump") or None,
            "taker": None if taker is None else int(taker),
            "trick": current_trick(observation),
            "leader": int(observation.get("leader") or 0),
            "player": player_to_act(observation),
            "tricks": finished_tricks(observation),
        }
        return view_snapshot(observation, first_dealer(observation, self.direction), state)
