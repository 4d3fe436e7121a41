"""Cards as small integers, and their short text form (``AS``, ``10H``, ``QC``, ``7D``).

A card is ``suit * 13 + rank`` where rank 0 is the two and rank 12 the ace, and the suits are
clubs 0, diamonds 1, hearts 2, spades 3. Integers keep the hot paths of random playouts cheap
(bots simulate thousands of games per decision); the text form is what people, records and the
wire see.

>>> format_card(parse_card("10H"))
'10H'
>>> format_card(parse_card("th"))
'10H'
>>> format_cards(sorted(parse_cards("AS 2C")))
'2C AS'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from cardtable.engine.errors import InvalidInput

Card = int

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUITS: tuple[int, ...] = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_LETTERS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
#: By suit letter, for words written for people: ``SUIT_SYMBOL_OF["H"] == "♥"``.
SUIT_SYMBOL_OF: dict[str, str] = dict(zip(SUIT_LETTERS, SUIT_SYMBOLS, strict=True))
SUIT_NAME_OF: dict[str, str] = dict(zip(SUIT_LETTERS, SUIT_NAMES, strict=True))

RANK_TEXTS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = range(13)

#: SUIT_OF[card] and RANK_OF[card]: table look-ups are faster than ``//`` and ``%`` in CPython.
SUIT_OF: tuple[int, ...] = tuple(card // 13 for card in range(52))
RANK_OF: tuple[int, ...] = tuple(card % 13 for card in range(52))

_RANK_BY_TEXT = {text: rank for rank, text in enumerate(RANK_TEXTS)}
_RANK_BY_TEXT["T"] = TEN
_CARD_TEXTS: tuple[str, ...] = tuple(
    RANK_TEXTS[card % 13] + SUIT_LETTERS[card // 13] for card in range(52)
)


#: Each card by its canonical short form: the form the engine writes, read back at a look-up's
#: cost (a searching bot reads every card of every world it draws from its snapshot).
_CARD_BY_TEXT: dict[str, Card] = {text: card for card, text in enumerate(_CARD_TEXTS)}


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (0 = two .. 12 = ace) in ``suit``."""
    return suit * 13 + rank


def parse_suit(text: str) -> int:
    """A suit from its letter (``S``), name (``spades``) or symbol (``♠``)."""
    cleaned = text.strip().upper()
    for suit in SUITS:
        if cleaned in (SUIT_LETTERS[suit], SUIT_NAMES[suit].upper(), SUIT_SYMBOLS[suit]):
            return suit
    raise InvalidInput(f"unknown suit {text!r}: use C, D, H or S")


def parse_card(text: str) -> Card:
    """A card from its short form; ``T`` is accepted for ten and case does not matter."""
    card = _CARD_BY_TEXT.get(text)
    if card is not None:
        return card
    cleaned = text.strip().upper()
    if len(cleaned) < 2:
        raise InvalidInput(f"unknown card {text!r}: write rank then suit, like AS or 10H")
    rank = _RANK_BY_TEXT.get(cleaned[:-1])
    suit_letter = cleaned[-1]
    if rank is None or suit_letter not in SUIT_LETTERS:
        raise InvalidInput(f"unknown card {text!r}: write rank then suit, like AS or 10H")
    return make_card(rank, SUIT_LETTERS.index(suit_letter))


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Cards from a space- or comma-separated string, or from a list of card strings."""
    parts = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(part) for part in parts]


def format_card(card: Card) -> str:
    """The short form of a card: ``AS``, ``10H``."""
    if not 0 <= card < 52:
        raise InvalidInput(f"not a card: {card!r}")
    return _CARD_TEXTS[card]


def format_cards(cards: Iterable[Card]) -> str:
    """Cards in short form separated by spaces, in the order given."""
    return " ".join(_CARD_TEXTS[card] for card in cards)


def card_texts(cards: Iterable[Card]) -> list[str]:
    """Cards as a list of short strings, the form records and observations use."""
    return [_CARD_TEXTS[card] for card in cards]


@cache
def deck_of_ranks(lowest_rank: int) -> tuple[Card, ...]:
    """Every card from ``lowest_rank`` up to the ace in the four suits, sorted; built once per
    rank (a tuple, so sharing it is safe), as the bots' hand readers ask for it per hand.

    Whist uses the 8 × n highest cards and Belote 7 to A: both are such a deck.
    """
    return tuple(make_card(rank, suit) for suit in SUITS for rank in range(lowest_rank, 13))


FULL_DECK: tuple[Card, ...] = deck_of_ranks(TWO)


def check_deck_order(order: Sequence[Card], deck: Sequence[Card]) -> tuple[Card, ...]:
    """``order`` as a tuple, once it is shown to be a permutation of ``deck``.

    A deck order is input from outside the engine (the table's shuffle, a record), so it is
    checked like any other input: every card of the game once, nothing else.
    """
    ordered = tuple(order)
    if len(ordered) != len(deck) or sorted(ordered) != sorted(deck):
        raise InvalidInput(
            f"a deck order must hold each of the game's {len(deck)} cards exactly once"
        )
    return ordered


def trick_winner(cards: Sequence[Card], leader: int, trump: int, players: int) -> int:
    """The seat that wins ``cards`` (in play order from ``leader``): docs/rules.md, common rules,
    for the ace-high games (Whist, 3-5-8; Hearts, with no trump, inlines it in its hot path).

    The highest trump wins, else the highest card of the suit led. Within a suit a higher card
    number is a higher rank, so comparing cards compares ranks.
    """
    best = cards[0]
    best_suit = SUIT_OF[best]
    best_position = 0
    for position in range(1, len(cards)):
        card = cards[position]
        suit = SUIT_OF[card]
        if suit == best_suit:
            if card > best:
                best, best_position = card, position
        elif suit == trump:
            best, best_suit, best_position = card, suit, position
    return (leader + best_position) % players
