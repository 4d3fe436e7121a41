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


def _card_values(trump: int) -> tuple[float, ...]:
    """``table[card]``: what the card is worth towards taking ``trump`` (read once a card in
    every playout's bid and every weighed world's reading of the bids)."""
    return tuple(
        (TRUMP_WEIGHT if SUIT_OF[card] == trump else PLAIN_WEIGHT).get(RANK_OF[card], 0.0)
        for card in range(52)
    )


#: ``CARD_VALUE[trump][card]``: :func:`_card_values` for each suit.
CARD_VALUE: tuple[tuple[float, ...], ...] = tuple(_card_values(suit) for suit in SUITS)


def hand_value(hand: Sequence[Card], trump: int) -> float:
    """What ``hand`` is worth towards taking ``trump``: its cards' values added in order."""
    values = CARD_VALUE[trump]
    value = 0.0
    for card in hand:
        value += values[card]
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


def _order_keys(trump: int, sign: int) -> tuple[int, ...]:
    """``table[card]``: a number that orders cards as (points, ``sign`` × strength) does, so
    that ``min`` and ``max`` key on a look-up, not a call (strengths run 0 to 15)."""
    strength, points = STRENGTH[trump], POINTS[trump]
    return tuple(16 * points[card] + sign * strength[card] for card in range(52))


#: ``CHEAP[trump][card]``: orders cards by points, then strength (the cheapest first).
CHEAP: tuple[tuple[int, ...], ...] = tuple(_order_keys(suit, 1) for suit in SUITS)
#: ``GIFT[trump][card]``: orders cards by points, then weakness (the best gift to a partner last).
GIFT: tuple[tuple[int, ...], ...] = tuple(_order_keys(suit, -1) for suit in SUITS)


def choose_play(state: BeloteState, seat: int, keen: bool = False) -> Action:
    legal = state.playable(seat)
    if len(legal) == 1:
        return PLAY[legal[0]]
    trump = state.trump
    strength = STRENGTH[trump]
    trick = state.trick
    if not trick:
        return PLAY[_lead(state, seat, legal, keen)]
    led = SUIT_OF[trick[0]]
    partner = (seat + 2) % PLAYERS
    last = len(trick) == PLAYERS - 1
    winning = state.win_strength
    if state.winner == partner:
        if last or _is_master(state, seat, trick, winning):
            # The partner takes the trick: give it points, but not our own master trumps.
            plain = [card for card in legal if SUIT_OF[card] != trump]
            return PLAY[max(plain or legal, key=GIFT[trump].__getitem__)]
        if keen:
            return PLAY[min(legal, key=CHEAP[trump].__getitem__)]
    winners = [card for card in legal if strength[card] > winning and SUIT_OF[card] in (led, trump)]
    if winners:
        if last or (SUIT_OF[winners[0]] == trump and led != trump):
            return PLAY[min(winners, key=strength.__getitem__)]
        if keen and state.winner != partner:
            top = _top_unseen(state, seat)
            masters = [card for card in winners if strength[card] >= top.get(SUIT_OF[card], -1)]
            if not masters:
                return PLAY[min(legal, key=CHEAP[trump].__getitem__)]
            return PLAY[max(masters, key=CHEAP[trump].__getitem__)]
        return PLAY[max(winners, key=strength.__getitem__)]
    return PLAY[min(legal, key=CHEAP[trump].__getitem__)]


def _top_unseen(state: BeloteState, seat: int) -> dict[int, int]:
    """The strength of the highest card, by suit, of those the seat cannot see (in the others'
    hands: in play every card of the deal is in a hand or played). A card of the seat's tops
    its suit when its strength is at least its suit's entry: one pass over the others' cards
    answers every card's question."""
    strength = STRENGTH[state.trump]
    top: dict[int, int] = {}
    for other, hand in enumerate(state.hands):
        if other == seat:
            continue
        for card in hand:
            suit = SUIT_OF[card]
            if strength[card] > top.get(suit, -1):
                top[suit] = strength[card]
    return top


def _is_master(state: BeloteState, seat: int, trick: list[Card], winning: int) -> bool:
    """Whether the winning card in ``trick`` cannot be beaten by a card the seat cannot see."""
    top = _top_unseen(state, seat)
    best = trick[(state.leader - state.winner) % PLAYERS]
    return top.get(SUIT_OF[best], -1) <= winning and top.get(state.trump, -1) <= winning


def _lead(state: BeloteState, seat: int, legal: list[Card], keen: bool) -> Card:
    trump = state.trump
    strength = STRENGTH[trump]
    trumps = [card for card in legal if SUIT_OF[card] == trump]
    takers = state.taker is not None and state.taker % 2 == seat % 2
    top: dict[int, int] | None = None
    if trumps and takers:
        top = _top_unseen(state, seat)
        best = max(trumps, key=strength.__getitem__)
        # The others' trumps: every trump not played is in a hand (``_top_unseen``).
        out = trump in top
        if out and top[trump] <= strength[best]:
            return best
        if keen and state.taker == seat and len(trumps) >= 2 and out:
            # Drawing trumps: a low one pulls the others' out, so the taker's masters cash later.
            return min(trumps, key=strength.__getitem__)
    if keen:
        # Any master of a plain suit cashes, the ten once the ace has fallen, most points first.
        if top is None:
            top = _top_unseen(state, seat)
        masters = [
            card
            for card in legal
            if SUIT_OF[card] != trump and strength[card] >= top.get(SUIT_OF[card], -1)
        ]
        if masters:
            return max(masters, key=CHEAP[trump].__getitem__)
    aces = [card for card in legal if SUIT_OF[card] != trump and RANK_OF[card] == ACE]
    if aces:
        return aces[0]
    plain = [card for card in legal if SUIT_OF[card] != trump]
    return min(plain or legal, key=CHEAP[trump].__getitem__)


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
