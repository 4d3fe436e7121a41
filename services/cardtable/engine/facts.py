"""Facts: the immutable records of what an action or a deal produced.

Every fact carries its ``audience``: ``None`` for everyone (public), or the seats that may see
it. The table service redacts views and watch streams by this field alone, so it never needs to
know which cards are secret in which game. Facts are named in the past tense, like the domain
events that carry them.

Game modules add their own facts (``ContractChosen``, ``CardsPassed`` ...) in the same style: a
``NamedTuple`` whose card fields are named ``card``/``*_card`` (one card) or ``cards``/``*_cards``
(several), so :func:`fact_to_dict` can print them without knowing the fact. The log holds each
kind as a typed message of the same fields (proto/cardtable/events/v1/facts.proto): a new kind
also needs its message there and its line in ``cardtable.platform.fact_messages.KINDS``, which
the conversion tests check.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from cardtable.engine.cards import card_texts, format_card

Audience = tuple[int, ...] | None
PUBLIC: Audience = None


class DealStarted(NamedTuple):
    """A new deal began; ``cards_each`` is the hand size, ``deck_size`` the cards in play."""

    deal_number: int
    dealer: int
    cards_each: int
    audience: Audience = PUBLIC


class CardsDealt(NamedTuple):
    """``seat`` received ``cards``; only that seat sees them."""

    seat: int
    cards: tuple[int, ...]
    audience: Audience = PUBLIC


class CardTurnedUp(NamedTuple):
    """A card from the deck was shown to everybody (Whist's trump card, Belote's turned card)."""

    card: int
    audience: Audience = PUBLIC


class TrumpChosen(NamedTuple):
    """The deal's trump suit (``""`` when the deal has no trump) and who chose it, if anyone."""

    trump: str
    seat: int | None = None
    audience: Audience = PUBLIC


class BidMade(NamedTuple):
    """``seat`` bid ``tricks`` (Whist)."""

    seat: int
    tricks: int
    audience: Audience = PUBLIC


class CardPlayed(NamedTuple):
    """``seat`` played ``card`` to the current trick."""

    seat: int
    card: int
    audience: Audience = PUBLIC


#: The most seats any game has (Whist's six).
MOST_SEATS = 6

#: ``CARD_PLAYED[seat][card]``: every ``CardPlayed`` fact there can be, built once. Facts never
#: change, and a search's playouts make one for every card played.
CARD_PLAYED: tuple[tuple[CardPlayed, ...], ...] = tuple(
    tuple(CardPlayed(seat, card) for card in range(52)) for seat in range(MOST_SEATS)
)


class TrickWon(NamedTuple):
    """Trick ``trick_number`` (1-based in the deal), led by ``leader``, went to ``seat``.

    ``cards`` are in play order starting with the leader; ``points`` are the card points in it
    for games that count them (Hearts, Belote), else 0.
    """

    trick_number: int
    leader: int
    seat: int
    cards: tuple[int, ...]
    points: int = 0
    audience: Audience = PUBLIC


class DealScored(NamedTuple):
    """A deal ended: each seat's score for it and the running totals after it."""

    deal_number: int
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    audience: Audience = PUBLIC


class GameEnded(NamedTuple):
    """The game is over: final totals and each seat's place (1 = best; tied seats share)."""

    totals: tuple[int, ...]
    places: tuple[int, ...]
    audience: Audience = PUBLIC


Fact = Any  # any of the NamedTuple facts above or a game's own; kept loose on purpose


def fact_kind(fact: Fact) -> str:
    """The fact's name, which is its class name (``CardPlayed``)."""
    return type(fact).__name__


def fact_to_dict(fact: Fact) -> dict[str, Any]:
    """A JSON-ready dict of a fact: its kind, its fields, cards written as short strings."""
    result: dict[str, Any] = {"kind": fact_kind(fact)}
    for name, value in fact._asdict().items():
        if name == "audience":
            result[name] = None if value is None else list(value)
        elif name == "card" or name.endswith("_card"):
            result[name] = None if value is None or value < 0 else format_card(value)
        elif name == "cards" or name.endswith("_cards"):
            result[name] = card_texts(value)
        elif isinstance(value, tuple):
            result[name] = list(value)
        else:
            result[name] = value
    return result


def visible_to(fact: Fact, seat: int | None) -> bool:
    """Whether ``seat`` (``None`` for a spectator) may see ``fact``."""
    audience = fact.audience
    return audience is None or (seat is not None and seat in audience)
