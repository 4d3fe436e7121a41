"""Rule-based Hearts: pass the dangerous cards, duck tricks with points, dump the queen.

Hearts has no trump; every heart taken costs a point and the queen of spades 13.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardtable.bots.rules.common import FinishedTricks
from cardtable.engine.actions import PLAY, Action, pass_cards
from cardtable.engine.cards import (
    ACE,
    CLUBS,
    DIAMONDS,
    HEARTS,
    KING,
    RANK_OF,
    SPADES,
    SUIT_OF,
    Card,
    make_card,
)
from cardtable.engine.games.hearts.rules import (
    CARD_POINTS,
    PASS_PHASE,
    PASS_SIZE,
    PLAYERS,
    QUEEN_OF_SPADES,
    HeartsState,
)

ACE_OF_SPADES = make_card(ACE, SPADES)
KING_OF_SPADES = make_card(KING, SPADES)
#: Low spades that make holding the queen (or the ace and king) of spades safe enough.
SPADE_GUARDS = 4
#: What each card held in a suit adds to the keen player's cost of leading it, in ranks: a
#: short suit, emptied, lets it discard points later (docs/proving-it.md, "Levels").
SHORT_SUIT_LEAD = 2.0


def danger(card: Card, hand: list[Card]) -> float:
    """How much a card should be passed: the queen and high spades, high hearts, high cards,
    and the last cards of a short minor suit (a void lets us discard points later)."""
    rank = RANK_OF[card]
    suit = SUIT_OF[card]
    low_spades = sum(1 for other in hand if SUIT_OF[other] == SPADES and other < QUEEN_OF_SPADES)
    if card in (QUEEN_OF_SPADES, ACE_OF_SPADES, KING_OF_SPADES):
        # Enough low spades keep the high ones safe: then they stay.
        if low_spades >= SPADE_GUARDS:
            return -1.0
        return 100.0 if card == QUEEN_OF_SPADES else 90.0 + rank
    score = float(rank)
    if suit == HEARTS:
        score += 6
    if suit in (CLUBS, DIAMONDS):
        length = sum(1 for other in hand if SUIT_OF[other] == suit)
        if length <= 2:
            score += 8 - 2 * length
    return score


def by_danger(hand: list[Card]) -> list[Card]:
    """The hand's cards, the ones to pass first (:func:`danger`)."""
    return sorted(hand, key=lambda card: danger(card, hand), reverse=True)


def choose_pass(state: HeartsState, seat: int) -> Action:
    return pass_cards(by_danger(state.hands[seat])[:PASS_SIZE])


def pass_alternatives(state: HeartsState, seat: int) -> list[Action]:
    """Passes of other kinds than :func:`choose_pass`'s, for a search to weigh beside it: the
    three least dangerous cards, which keep the high ones for a try at the moon, and for each
    suit of one to three cards that suit with the most dangerous others, which empties it.
    A search over passes one card away from the rule's never reaches these, and in a sizeable
    share of hands one of them is the best pass (docs/proving-it.md, "Levels")."""
    hand = state.hands[seat]
    ranked = by_danger(hand)
    found = [pass_cards(ranked[-PASS_SIZE:])]
    for suit in (CLUBS, DIAMONDS, SPADES, HEARTS):
        cards = [card for card in hand if SUIT_OF[card] == suit]
        if 1 <= len(cards) <= PASS_SIZE:
            others = [card for card in ranked if card not in cards]
            found.append(pass_cards(cards + others[: PASS_SIZE - len(cards)]))
    rule = pass_cards(ranked[:PASS_SIZE])
    unique: list[Action] = []
    for action in found:
        if action != rule and action not in unique:
            unique.append(action)
    return unique


def choose_play(state: HeartsState, seat: int, keen: bool = False) -> Action:
    legal = state.playable(seat)
    if len(legal) == 1:
        return PLAY[legal[0]]
    # In a whole state every card not yet played is in a hand: a cheaper test than the tricks.
    queen_out = any(QUEEN_OF_SPADES in hand for hand in state.hands)
    return PLAY[_card(state.hands[seat], legal, state.trick, queen_out, keen)]


def card_then(
    state: HeartsState,
    seat: int,
    hand: list[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    tricks: FinishedTricks,
    *,
    keen: bool = False,
) -> Card:
    """The card the player of ``seat`` plays with ``hand`` on ``trick`` after the finished
    ``tricks``: now (:func:`choose_play`), or earlier in the deal, to weigh worlds by it."""
    queen_out = QUEEN_OF_SPADES not in trick and not any(
        QUEEN_OF_SPADES in cards for _, cards, _ in tricks
    )
    return _card(hand, legal, trick, queen_out, keen)


def _card(
    hand: list[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    queen_out: bool,
    keen: bool,
) -> Card:
    """Duck under the trick's best card, take a trick without points high and discard the
    dangerous cards; ``queen_out``: the queen of spades is not played yet; ``keen``: see
    :func:`act_keen`."""
    if not trick:
        return _lead(list(legal), hand, queen_out, keen)
    led = SUIT_OF[trick[0]]
    best = max(card for card in trick if SUIT_OF[card] == led)
    if SUIT_OF[legal[0]] == led:
        last = len(trick) == PLAYERS - 1
        if keen and last and not any(CARD_POINTS[card] for card in trick):
            unloaded = [card for card in legal if card != QUEEN_OF_SPADES]
            if unloaded:
                return max(unloaded)
        below = [card for card in legal if card < best]
        if below:
            return max(below)
        # Every card wins: take it with the highest, but never with the queen of spades.
        safe = [card for card in legal if card != QUEEN_OF_SPADES]
        if keen and led == SPADES and not last and queen_out and QUEEN_OF_SPADES not in hand:
            under_queen = [card for card in safe if card < QUEEN_OF_SPADES]
            if under_queen:
                return max(under_queen)
        if last or not safe:
            return max(safe or legal)
        points = sum(CARD_POINTS[card] for card in trick)
        return max(safe) if points == 0 else min(safe)
    return _discard(list(legal), queen_out)


def _lead(legal: list[Card], hand: list[Card], queen_out: bool, keen: bool) -> Card:
    """The lowest card, keeping away from spades while we hold a high one and the queen is
    out, and (but ``keen``) from hearts; ``keen``, the lowest spade while she is out and we
    hold no high one, else low in a short suit."""
    high_spade = any(card in hand for card in (QUEEN_OF_SPADES, KING_OF_SPADES, ACE_OF_SPADES))
    if keen and queen_out and not high_spade:
        spades = [card for card in legal if SUIT_OF[card] == SPADES]
        if spades:
            return min(spades)
    lengths = [0, 0, 0, 0]
    if keen:
        for card in hand:
            lengths[SUIT_OF[card]] += 1

    def cost(card: Card) -> float:
        suit = SUIT_OF[card]
        value = float(RANK_OF[card]) + SHORT_SUIT_LEAD * lengths[suit]
        if suit == SPADES and queen_out and high_spade:
            value += 20
        if suit == HEARTS and not keen:
            value += 8
        return value

    return min(legal, key=cost)


def _discard(legal: list[Card], queen_out: bool) -> Card:
    """Void in the suit led: the queen, then the high spades while she is out, then the
    highest heart, then the highest card."""
    if QUEEN_OF_SPADES in legal:
        return QUEEN_OF_SPADES
    if queen_out:
        for card in (ACE_OF_SPADES, KING_OF_SPADES):
            if card in legal:
                return card
    hearts = [card for card in legal if SUIT_OF[card] == HEARTS]
    if hearts:
        return max(hearts)
    return max(legal, key=lambda card: RANK_OF[card])


def act(state: HeartsState, seat: int) -> Action:
    if state.phase == PASS_PHASE:
        return choose_pass(state, seat)
    return choose_play(state, seat)


def act_keen(state: HeartsState, seat: int) -> Action:
    """:func:`act` with five habits of stronger players, for the hard level's playouts.
    Fishing for the queen: while she is out and the seat holds no spade above the jack, it
    leads its lowest spade, so that whoever holds her must sooner or later play her on a trick
    someone else takes, or part with her guards. Low in a short suit: it leads low from its
    shorter suits, two ranks for each card held, to empty one and discard onto it later; and
    once hearts are broken, a low heart is as good a lead as any low card. Not over her:
    following spades that all win, with her out in another hand and a seat still to play, it
    plays a spade below her, not the king or ace she would fall on. Unloading: last to a
    trick without points, it takes it with its highest card, which is safe now and a danger
    later, rather than ducking."""
    if state.phase == PASS_PHASE:
        return choose_pass(state, seat)
    return choose_play(state, seat, keen=True)
