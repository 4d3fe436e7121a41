"""3-5-8's determinization view: where the cards a seat does not see may be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardtable.engine.cards import FULL_DECK, SUIT_LETTERS, SUIT_OF, Card, card_texts, parse_card
from cardtable.engine.games.three_five_eight.phases import Phase
from cardtable.engine.games.three_five_eight.rules import FIRST_CARDS, PLAYERS, TALON_SIZE
from cardtable.engine.hidden import (
    GameView,
    HiddenCards,
    Layout,
    current_trick,
    deal_plays,
    exclude_must_trump,
    exclude_voids,
    finished_tricks,
    first_dealer,
    observed_cards,
    observer_seat,
    player_to_act,
    view_snapshot,
)

TALON = "talon"
DISCARDED = "discarded"
_PLACEHOLDER = "2C"


class ThreeFiveEightView(GameView):
    """3-5-8: the other hands, the talon until the declarer takes it, then the discard pile.

    While the contract is chosen each seat sees only its first 6 cards, so its own hand holds
    10 unseen cards too.
    """

    extra_places = (TALON, DISCARDED)

    def hidden(self, observation: Mapping[str, Any]) -> HiddenCards:
        layout = self._new_layout(observation)
        seat = layout.seat
        phase = observation["phase"]
        deck = FULL_DECK
        declarer = int(observation["declarer"])
        talon, discarded = layout.index(TALON), layout.index(DISCARDED)
        talon_taken = phase in (Phase.DISCARD, Phase.PLAY)
        layout.sizes[talon] = 0 if talon_taken else TALON_SIZE
        if phase == Phase.PLAY:
            layout.sizes[discarded] = TALON_SIZE
            if seat == declarer:
                layout.known[discarded] = observed_cards(observation["discarded"])
        plays = deal_plays(observation, self.direction)
        played = {play.card for play in plays}
        self._exchanges(observation, layout, talon_taken, played)
        exclude_voids(layout, deck, plays)
        if (observation.get("options") or {}).get("trump_beat"):
            trump = SUIT_LETTERS.find(observation["trump"]) if observation["trump"] else -1
            exclude_must_trump(layout, deck, plays, trump)
        seen = [*layout.known[seat], *layout.known[discarded], *played]
        return layout.hidden(deck, seen)

    @staticmethod
    def _exchanges(
        observation: Mapping[str, Any], layout: Layout, talon_taken: bool, played: set[Card]
    ) -> None:
        """What the seat learnt from the exchanges it took part in (docs/rules.md, card exchange).

        The debtor gives back the highest card it holds in the suit of the card received, so
        it held nothing higher, and never will this deal (whatever it receives later, its
        highest goes back) unless it is the declarer and has taken the talon. The card each
        side received stays with it, unless it took part in a later exchange the seat did not
        see (then it may be with the other side of that one too) or it is the declarer, who
        may have put it away with the talon.
        """
        seat = layout.seat
        declarer = int(observation["declarer"])
        deck = FULL_DECK
        exchanges = list(observation.get("exchanges") or [])
        possible: dict[Card, set[int]] = {}
        for index, exchange in enumerate(exchanges):
            if exchange.get("given") is None:
                continue
            creditor, debtor = int(exchange["creditor"]), int(exchange["debtor"])
            given, returned = parse_card(exchange["given"]), parse_card(exchange["returned"])
            if debtor != seat and not (debtor == declarer and talon_taken):
                layout.exclude(
                    debtor,
                    [card for card in deck if SUIT_OF[card] == SUIT_OF[given] and card > returned],
                )
            # After an exchange the seat saw, the card it got is in its own hand (it knows
            # where that goes next) and the card it handed over is with the other side. A
            # card given and sent straight back ends with the creditor.
            got: Card | None
            handed: Card | None
            if seat == creditor:
                other, got, handed = debtor, returned, (given if given != returned else None)
            else:
                other, got, handed = creditor, (given if given != returned else None), returned
            if got is not None:
                possible.pop(got, None)
            if handed is None:
                continue
            places = {other}
            for later in exchanges[index + 1 :]:
                pair = {int(later["creditor"]), int(later["debtor"])}
                if seat not in pair and places & pair:
                    places |= pair
            possible[handed] = places
        mine = set(layout.known[seat])
        discarded = layout.index(DISCARDED)
        for card, places in possible.items():
            if card in mine or card in played:
                continue
            if declarer in places and layout.sizes[discarded]:
                places = places | {discarded}
            if len(places) == 1:
                layout.known[next(iter(places))].append(card)
            else:
                for place in range(len(layout.places)):
                    if place not in places:
                        layout.exclude(place, [card])

    def snapshot(self, observation: Mapping[str, Any], places: list[list[Card]]) -> dict[str, Any]:
        seat = observer_seat(observation)
        phase = observation["phase"]
        players = PLAYERS
        declarer = int(observation["declarer"])
        hands = places[:players]
        talon = places[players]
        discarded = places[players + 1]
        first_cards: list[list[Card]] = [[] for _ in range(players)]
        if phase == Phase.CONTRACT:
            first_cards = [hand[:FIRST_CARDS] for hand in hands]
            first_cards[seat] = observed_cards(observation["hand"])
        if phase in (Phase.DISCARD, Phase.PLAY):
            if seat == declarer:
                talon = observed_cards(observation["talon"])
            elif phase == Phase.PLAY:
                talon = discarded
            else:
                talon = hands[declarer][-TALON_SIZE:]
        state = {
            "phase": phase,
            "hands": [card_texts(hand) for hand in hands],
            "first_cards": [card_texts(cards) for cards in first_cards],
            "talon": card_texts(talon),
            "discarded": card_texts(discarded),
            "contract": observation["contract"],
            "used_contracts": [list(used) for used in observation["used_contracts"]],
            "exchange_queue": [
                [int(owed["creditor"]), int(owed["debtor"]), int(owed["count"])]
                for owed in observation.get("exchanges_owed") or []
            ],
            # The cards of an exchange the seat did not see are hidden from it in any world,
            # and play never reads them: a placeholder keeps the record of who exchanged.
            "exchanges": [
                {
                    "creditor": int(exchange["creditor"]),
                    "debtor": int(exchange["debtor"]),
                    "given": exchange.get("given") or _PLACEHOLDER,
                    "returned": exchange.get("returned") or _PLACEHOLDER,
                }
                for exchange in observation.get("exchanges") or []
            ],
            "skipped": [
                [int(skipped["creditor"]), int(skipped["count"])]
                for skipped in observation.get("exchanges_skipped") or []
            ],
            "trick": current_trick(observation),
            "leader": int(observation.get("leader") or 0),
            "player": player_to_act(observation),
            "tricks": finished_tricks(observation),
            "tricks_won": [int(won) for won in observation["tricks_won"]],
        }
        return view_snapshot(observation, first_dealer(observation, 1), state)
