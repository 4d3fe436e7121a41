"""Trick-play helpers shared by the rule-based players of the ace-high games.

Whist, Hearts and 3-5-8 rank cards ace high and (except Hearts) may have a trump suit; a card
is ``suit * 13 + rank``, so within a suit a larger card is a higher one. Each game's deck holds
every rank from its lowest up to the ace, so "every higher card of the suit" is simply the
cards above it. The helpers read only what a seat may know: its hand and the cards played.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cardtable.engine.cards import RANK_OF, SUIT_OF, Card, trick_winner

NO_TRUMP = -1
#: The deal's finished tricks, as the engines keep them: leader, cards in play order, winner.
FinishedTricks = Sequence[tuple[int, tuple[Card, ...], int]]

#: ``STRENGTHS[trump + 1][card]``: a card's power in a trick among the cards that count, trumps
#: above every plain card; index 0 is for a deal without trump. Look-ups keep playouts cheap.
STRENGTHS: tuple[tuple[int, ...], ...] = tuple(
    tuple(RANK_OF[card] + (13 if SUIT_OF[card] == trump else 0) for card in range(52))
    for trump in (NO_TRUMP, 0, 1, 2, 3)
)


#: ``BEATS[trump + 1][best * 52 + card]``: whether ``card`` played now takes the trick from
#: ``best``, the card winning it. Drawn once from the engine's own trick rule (as if ``best``
#: had led, which gives the same answer: only its suit or a trump can beat it), so the rule
#: lives in the engine alone while playouts keep a look-up's speed.
BEATS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(trick_winner((best, card), 0, trump, 2) == 1 for best in range(52) for card in range(52))
    for trump in (NO_TRUMP, 0, 1, 2, 3)
)


def beats(card: Card, best: Card, trump: int) -> bool:
    """Whether ``card`` played now takes the trick from ``best``, the card winning it."""
    return BEATS[trump + 1][best * 52 + card]


def played_cards(
    tricks: Iterable[tuple[int, tuple[Card, ...], int]], trick: Iterable[Card]
) -> set[Card]:
    """Every card played this deal: the finished tricks and the trick in progress."""
    played = {card for _, cards, _ in tricks for card in cards}
    played.update(trick)
    return played


#: ``ABOVE[card]``: the higher cards of its suit, looked up for the playouts' sake.
ABOVE: tuple[range, ...] = tuple(range(card + 1, SUIT_OF[card] * 13 + 13) for card in range(52))


def is_master(card: Card, known: set[Card]) -> bool:
    """Whether no other seat can hold a higher card of its suit: every one is ``known``
    (played, or in our hand)."""
    return known.issuperset(ABOVE[card])


def play_for_tricks(
    hand: Sequence[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    trump: int,
    players: int,
    want: bool,
    tricks: Iterable[tuple[int, tuple[Card, ...], int]],
) -> Card:
    """A sensible card for a player who wants the trick (``want``) or wants to lose it.

    Wanting tricks: cash a sure winner when leading, else lead low; win as cheaply as is safe
    (the lowest winner when last or when trumping, the highest otherwise); when it cannot win,
    throw the lowest card. Not wanting: lead the lowest card; play the highest card that still
    loses; when every card wins, win with the highest if last (it is lost anyway), else the
    lowest, hoping someone plays over it. ``tricks`` are the deal's finished tricks.
    """
    if len(legal) == 1:
        return legal[0]
    # Playouts call this for nearly every card, so the look-up rows are bound once here.
    strengths = STRENGTHS[trump + 1].__getitem__
    if not trick:
        known = played_cards(tricks, hand)
        superset = known.issuperset
        if want:
            masters = [card for card in legal if superset(ABOVE[card])]
            plain = [card for card in masters if SUIT_OF[card] != trump]
            if plain or masters:
                return max(plain or masters, key=strengths)
            return min(legal, key=strengths)
        safe = [card for card in legal if not superset(ABOVE[card])]
        return min(safe or legal, key=strengths)
    beat = BEATS[trump + 1]
    best = trick[0]
    for card in trick[1:]:
        if beat[best * 52 + card]:
            best = card
    base = best * 52
    winners = [card for card in legal if beat[base + card]]
    last = len(trick) == players - 1
    if want:
        if not winners:
            return min(legal, key=strengths)
        if last or SUIT_OF[winners[0]] != SUIT_OF[trick[0]]:
            return min(winners, key=strengths)
        return max(winners, key=strengths)
    losers = [card for card in legal if not beat[base + card]]
    if losers:
        return max(losers, key=lambda card: (RANK_OF[card], SUIT_OF[card] == trump))
    return max(winners, key=strengths) if last else min(winners, key=strengths)
