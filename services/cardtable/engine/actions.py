"""Actions a seat can take, with one text form that records and the wire share.

An action is a small immutable tuple. The kinds that carry a single card or bid are
preallocated (``PLAY[card]``, ``BID[tricks]``) so listing legal actions in a random playout
allocates nothing new.

Text forms (parse and format are exact inverses):

========================  ===================================================
``play QS``               play a card (all games)
``bid 3``                 bid a number of tricks (Whist)
``pass 2C 3D QS``         pass three cards (Hearts)
``contract NT``           choose a contract: S, H, D, C, NT or MT (3-5-8)
``give 7H``               give a card in the exchange (3-5-8 creditor)
``discard 2C 3C 4C 5C``   put four cards away after taking the talon (3-5-8)
``take``                  take the turned card's suit as trump (Belote round 1)
``name H``                name another suit as trump (Belote round 2)
``pass``                  decline to take or name trump (Belote)
========================  ===================================================

>>> parse_action("pass 2c 3d qs")
Action(kind='pass_cards', card=-1, cards=(0, 14, 49), number=-1, choice='')
>>> format_action(parse_action("bid 3"))
'bid 3'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from cardtable.engine.cards import Card, format_card, format_cards, parse_card, parse_cards
from cardtable.engine.errors import InvalidInput

PLAY_CARD = "play"
BID = "bid"
PASS_CARDS = "pass_cards"
CHOOSE_CONTRACT = "contract"
GIVE_CARD = "give"
DISCARD = "discard"
TAKE_TRUMP = "take"
NAME_TRUMP = "name"
PASS = "pass"

ACTION_KINDS = (
    PLAY_CARD,
    BID,
    PASS_CARDS,
    CHOOSE_CONTRACT,
    GIVE_CARD,
    DISCARD,
    TAKE_TRUMP,
    NAME_TRUMP,
    PASS,
)


class Action(NamedTuple):
    """One decision of one seat. Unused fields keep their defaults."""

    kind: str
    card: Card = -1
    cards: tuple[Card, ...] = ()
    number: int = -1
    choice: str = ""

    def __str__(self) -> str:
        return format_action(self)


#: Preallocated actions: ``PLAY[card]`` for every card, ``BID[n]`` for 0..13 tricks.
PLAY: tuple[Action, ...] = tuple(Action(PLAY_CARD, card=card) for card in range(52))
BIDS: tuple[Action, ...] = tuple(Action(BID, number=tricks) for tricks in range(14))
GIVE: tuple[Action, ...] = tuple(Action(GIVE_CARD, card=card) for card in range(52))
TAKE = Action(TAKE_TRUMP)
PASS_BID = Action(PASS)


#: Kinds whose action text names cards the other seats must not see yet.
PRIVATE_KINDS = frozenset({PASS_CARDS, DISCARD, GIVE_CARD})


def action_audience(action: Action, seat: int) -> tuple[int, ...] | None:
    """Who may see the action itself: everybody (``None``) or only the seat that took it.

    A card played or a bid is public; the cards a seat passes, discards or gives are not (the
    game's facts tell the receiver what it received, at the right moment).
    """
    return (seat,) if action.kind in PRIVATE_KINDS else None


def play(card: Card) -> Action:
    """``play CARD``."""
    return PLAY[card]


def bid(tricks: int) -> Action:
    """``bid N``."""
    if not 0 <= tricks < len(BIDS):
        raise InvalidInput(f"a bid is a number of tricks from 0 to 13, not {tricks}")
    return BIDS[tricks]


def pass_cards(cards: Iterable[Card]) -> Action:
    """``pass C1 C2 C3``; the cards are kept sorted so equal passes compare equal."""
    return Action(PASS_CARDS, cards=tuple(sorted(cards)))


def choose_contract(contract: str) -> Action:
    """``contract X``."""
    return Action(CHOOSE_CONTRACT, choice=contract.upper())


def give(card: Card) -> Action:
    """``give CARD``."""
    return GIVE[card]


def discard(cards: Iterable[Card]) -> Action:
    """``discard C1 C2 C3 C4``; sorted so equal discards compare equal."""
    return Action(DISCARD, cards=tuple(sorted(cards)))


def name_trump(suit_letter: str) -> Action:
    """``name S``."""
    return Action(NAME_TRUMP, choice=suit_letter.upper())


def format_action(action: Action) -> str:
    """The text form of an action (see the module docstring)."""
    kind = action.kind
    if kind in (PLAY_CARD, GIVE_CARD):
        return f"{kind} {format_card(action.card)}"
    if kind == BID:
        return f"bid {action.number}"
    if kind == PASS_CARDS:
        return f"pass {format_cards(action.cards)}"
    if kind == DISCARD:
        return f"discard {format_cards(action.cards)}"
    if kind in (CHOOSE_CONTRACT, NAME_TRUMP):
        return f"{kind} {action.choice}"
    if kind in (TAKE_TRUMP, PASS):
        return kind
    raise InvalidInput(f"unknown action kind {kind!r}")


def parse_action(text: str) -> Action:
    """An action from its text form; raises :class:`InvalidInput` with a readable reason."""
    words = text.strip().split()
    if not words:
        raise InvalidInput("empty action")
    verb, rest = words[0].lower(), words[1:]
    try:
        if verb in (PLAY_CARD, GIVE_CARD) and len(rest) == 1:
            card = parse_card(rest[0])
            return play(card) if verb == PLAY_CARD else give(card)
        if verb == BID and len(rest) == 1:
            return bid(int(rest[0]))
        if verb == PASS and not rest:
            return PASS_BID
        if verb == PASS:
            return pass_cards(parse_cards(rest))
        if verb == DISCARD and rest:
            return discard(parse_cards(rest))
        if verb in (CHOOSE_CONTRACT, NAME_TRUMP) and len(rest) == 1:
            return choose_contract(rest[0]) if verb == CHOOSE_CONTRACT else name_trump(rest[0])
        if verb == TAKE_TRUMP and not rest:
            return TAKE
    except ValueError as error:
        raise InvalidInput(f"cannot read action {text!r}: {error}") from None
    raise InvalidInput(
        f"cannot read action {text!r}: expected e.g. 'play QS', 'bid 2', 'pass 2C 3D 4H', "
        "'contract NT', 'give 7H', 'discard 2C 3C 4C 5C', 'take', 'name H' or 'pass'"
    )
