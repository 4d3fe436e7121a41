"""Rule-based Belote: take trump on a strong hand (the jack and nine of trump count most),
lead trumps when the team took and holds the master trump, give points to a partner who is
winning, win cheaply, and otherwise throw the card worth least.

Seats play counter-clockwise (after seat s comes s - 1); a seat's partner is seat s + 2.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardtable.engine.actions import PASS_BID, PLAY, TAKE, Action
from cardtable.engine.cards import (
    ACE,
    EIGHT,
    JACK,
    KING,
    NINE,
    QUEEN,
    RANK_OF,
    SEVEN,
    SUIT_OF,
    SUITS,
    TEN,
    Card,
)
from cardtable.engine.games.belote.rules import (
    NAME_ACTIONS,
    PLAYERS,
    POINTS,
    STRENGTH,
    BeloteState,
)

#: What a card is worth towards taking a suit as trump, by rank: in trumps and in plain suits.
TRUMP_WEIGHT = {JACK: 3.5, NINE: 2.5, ACE: 1.5, TEN: 1.2, KING: 0.8, QUEEN: 0.8, EIGHT: 0.5}
TRUMP_WEIGHT[SEVEN] = 0.5
PLAIN_WEIGHT = {ACE: 1.2, TEN: 0.4, KING: 0.2}
#: A hand worth this much (turned card included when taking it) takes or names trump.
TAKE_AT = 6.0


def hand_value(hand: list[Card], trump: int) -> float:
    value = 0.0
    for card in hand:
        weights = TRUMP_WEIGHT if SUIT_OF[card] == trump else PLAIN_WEIGHT
        value += weights.get(RANK_OF[card], 0.0)
    return value


def choose_bid(state: BeloteState, seat: int) -> Action:
    hand = state.hands[seat]
    turned = state.turned_card
    if state.bid_round == 1:
        value = hand_value([*hand, turned], SUIT_OF[turned])
        return TAKE if value >= TAKE_AT else PASS_BID
    options = [suit for suit in SUITS if suit != SUIT_OF[turned]]
    best = max(options, key=lambda suit: hand_value([*hand, turned], suit))
    if hand_value([*hand, turned], best) >= TAKE_AT:
        return NAME_ACTIONS[best]
    return PASS_BID


def choose_play(state: BeloteState, seat: int, keen: bool = False) -> Action:
    legal = state.playable(seat)
    if len(legal) == 1:
        return PLAY[legal[0]]
    trump = state.trump
    strength = STRENGTH[trump]
    points = POINTS[trump]
    trick = state.trick
    if not trick:
        return PLAY[_lead(state, seat, legal, keen)]
    led = SUIT_OF[trick[0]]
    partner = (seat + 2) % PLAYERS
    last = len(trick) == PLAYERS - 1
    winning = state.win_strength
    cheapest = min(legal, key=lambda card: (points[card], strength[card]))
    if state.winner == partner:
        if last or _is_master(state, seat, trick, winning):
            # The partner takes the trick: give it points, but not our own master trumps.
            plain = [card for card in legal if SUIT_OF[card] != trump]
            return PLAY[max(plain or legal, key=lambda card: (points[card], -strength[card]))]
        if keen:
            return PLAY[cheapest]
    winners = [card for card in legal if strength[card] > winning and SUIT_OF[card] in (led, trump)]
    if winners:
        if last or (SUIT_OF[winners[0]] == trump and led != trump):
            return PLAY[min(winners, key=lambda card: strength[card])]
        if keen and state.winner != partner:
            unseen = _unseen(state, seat)
            masters = [card for card in winners if _tops_its_suit(card, strength, unseen)]
            if not masters:
                return PLAY[cheapest]
            return PLAY[max(masters, key=lambda card: (points[card], strength[card]))]
        return PLAY[max(winners, key=lambda card: strength[card])]
    return PLAY[cheapest]


def _unseen(state: BeloteState, seat: int) -> set[Card]:
    """The cards the seat cannot see: in the others' hands (none played yet, none its own)."""
    return {card for other, hand in enumerate(state.hands) if other != seat for card in hand}


def _tops_its_suit(card: Card, strength: Sequence[int], unseen: set[Card]) -> bool:
    """Whether no card the seat cannot see is higher in ``card``'s suit."""
    suit = SUIT_OF[card]
    return not any(SUIT_OF[other] == suit and strength[other] > strength[card] for other in unseen)


def _is_master(state: BeloteState, seat: int, trick: list[Card], winning: int) -> bool:
    """Whether the winning card in ``trick`` cannot be beaten by a card the seat cannot see."""
    trump = state.trump
    strength = STRENGTH[trump]
    played = {card for _, cards, _ in state.tricks for card in cards}
    played.update(trick)
    hand = state.hands[seat]
    best = trick[(state.leader - state.winner) % PLAYERS]
    suits = (SUIT_OF[best], trump)
    return not any(
        SUIT_OF[card] in suits
        and strength[card] > winning
        and card not in played
        and card not in hand
        for card in state.deck()
    )


def _lead(state: BeloteState, seat: int, legal: list[Card], keen: bool) -> Card:
    trump = state.trump
    strength = STRENGTH[trump]
    points = POINTS[trump]
    trumps = [card for card in legal if SUIT_OF[card] == trump]
    takers = state.taker is not None and state.taker % 2 == seat % 2
    played = {card for _, cards, _ in state.tricks for card in cards}
    if trumps and takers:
        top = max(trumps, key=lambda card: strength[card])
        higher = [
            card
            for card in state.deck()
            if SUIT_OF[card] == trump and strength[card] > strength[top] and card not in played
        ]
        out = [
            card
            for card in state.deck()
            if SUIT_OF[card] == trump and card not in played and card not in state.hands[seat]
        ]
        if not higher and out:
            return top
        if keen and state.taker == seat and len(trumps) >= 2 and out:
            # Drawing trumps: a low one pulls the others' out, so the taker's masters cash later.
            return min(trumps, key=lambda card: strength[card])
    if keen:
        # Any master of a plain suit cashes, the ten once the ace has fallen, most points first.
        unseen = _unseen(state, seat)
        masters = [
            card
            for card in legal
            if SUIT_OF[card] != trump and _tops_its_suit(card, strength, unseen)
        ]
        if masters:
            return max(masters, key=lambda card: (points[card], strength[card]))
    aces = [card for card in legal if SUIT_OF[card] != trump and RANK_OF[card] == ACE]
    if aces:
        return aces[0]
    plain = [card for card in legal if SUIT_OF[card] != trump]
    return min(plain or legal, key=lambda card: (points[card], strength[card]))


def act(state: BeloteState, seat: int) -> Action:
    if state.phase == "bid":
        return choose_bid(state, seat)
    return choose_play(state, seat)


def act_keen(state: BeloteState, seat: int) -> Action:
    """:func:`act` with four habits of stronger players, for the hard level's playouts.
    Drawing trumps: the taker holding two trumps or more but not the master leads its lowest
    while the others may hold trumps. Cashing: it leads any master of a plain suit (the ten
    once the ace has fallen), not only aces. Trusting the partner: while the partner is
    winning a trick, it does not overtake it. Second hand low: following suit with a card
    that wins for now but not for sure, it keeps it and plays its cheapest card, and with a
    sure winner takes the most points."""
    if state.phase == "bid":
        return choose_bid(state, seat)
    return choose_play(state, seat, keen=True)
