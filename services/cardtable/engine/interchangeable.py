"""Which of a seat's cards are interchangeable: playing one or the other changes only a name.

Two cards of one suit are interchangeable for a seat when every card of the suit ranked between
them, in the order that decides tricks, is in the seat's hand or in a finished trick, and they are
worth the same points. Against every card another seat may hold they then win and lose alike,
so each way the deal can go with one is a way it goes with the other: a search need weigh only
one card of each group (``bots/search.py``).

>>> interchangeable_groups([3, 5, 9], known={3, 4, 5, 9}, deck=range(13),
...                        trick_rank=lambda card: card, points=lambda card: 0)
[[3, 5], [9]]
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from cardtable.engine.cards import SUIT_OF, Card


def by_card_number(card: Card) -> int:
    """The trick order of the ace-high games: within a suit a higher card number wins."""
    return card


def no_points(card: Card) -> int:
    """Games where only tricks count (Whist, 3-5-8)."""
    return 0


def known_to(hand: Iterable[Card], tricks: Iterable[tuple[int, Sequence[Card], int]]) -> set[Card]:
    """The cards that can no longer come between two of a seat's cards: its hand and the cards
    of the finished tricks. A card on the table in the trick being played still can: it may
    beat one card and not the other."""
    known = set(hand)
    for _, cards, _ in tricks:
        known.update(cards)
    return known


def interchangeable_groups(
    cards: Sequence[Card],
    known: Collection[Card],
    deck: Iterable[Card],
    trick_rank: Callable[[Card], int],
    points: Callable[[Card], int],
) -> list[list[Card]]:
    """``cards`` grouped into interchangeable ones, each group in the order of ``cards`` and
    the groups in the order of their first card. ``known`` holds the seat's hand and the cards
    played; ``trick_rank`` orders a suit's cards as tricks do, ``points`` is a card's worth."""
    chosen = set(cards)
    suits = {SUIT_OF[card] for card in cards}
    group_of: dict[Card, int] = {}
    groups: list[list[Card]] = []
    for suit in suits:
        run: list[Card] = []
        for card in sorted((card for card in deck if SUIT_OF[card] == suit), key=trick_rank):
            if card in chosen:
                if run and points(run[0]) != points(card):
                    run = []
                if not run:
                    groups.append(run)
                run.append(card)
                group_of[card] = len(groups) - 1
            elif card not in known:
                run = []  # another seat may hold it: the cards around it part ways
    ordered: list[list[Card]] = []
    seen: set[int] = set()
    for card in cards:
        index = group_of[card]
        if index not in seen:
            seen.add(index)
            ordered.append([member for member in cards if group_of[member] == index])
    return ordered
