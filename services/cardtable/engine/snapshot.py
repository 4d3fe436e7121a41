"""Reading snapshots safely: typed getters that raise :class:`InvalidInput` with the key's name.

A snapshot is the state of a game in flight, as JSON, so that the rules service can stay
stateless and a move costs the same whatever the game's length. It arrives from outside, so
every field is checked for type and range before a state is built from it, and each game then
checks its own invariants (every card of the deck exactly once, and so on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

from cardtable.engine.cards import Card, card_texts, parse_card
from cardtable.engine.errors import InvalidInput

SNAPSHOT_FORMAT = "cardtable-state"

PhaseT = TypeVar("PhaseT", bound=StrEnum)


def require(data: Mapping[str, Any], key: str) -> Any:
    if not isinstance(data, Mapping) or key not in data:
        raise InvalidInput(f"snapshot is missing {key!r}")
    return data[key]


def read_int(data: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = require(data, key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidInput(f"snapshot field {key!r} must be a whole number from {low} to {high}")
    return value


def read_optional_int(data: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    if require(data, key) is None:
        return None
    return read_int(data, key, low, high)


def read_bool(data: Mapping[str, Any], key: str) -> bool:
    value = require(data, key)
    if not isinstance(value, bool):
        raise InvalidInput(f"snapshot field {key!r} must be true or false")
    return value


def read_str(data: Mapping[str, Any], key: str, allowed: Sequence[str]) -> str:
    value = require(data, key)
    if value not in allowed:
        raise InvalidInput(f"snapshot field {key!r} must be one of {list(allowed)}")
    return str(value)


def read_phase(data: Mapping[str, Any], key: str, phases: type[PhaseT]) -> PhaseT:
    """A field that must name one of a game's ``phases``, as that enum's member."""
    return phases(read_str(data, key, [phase.value for phase in phases]))


def read_cards(data: Mapping[str, Any], key: str, max_len: int = 52) -> list[Card]:
    value = require(data, key)
    return cards_from_json(value, key, max_len)


def cards_from_json(value: Any, key: str, max_len: int = 52) -> list[Card]:
    if not isinstance(value, list) or len(value) > max_len:
        raise InvalidInput(f"snapshot field {key!r} must be a list of at most {max_len} cards")
    if not all(isinstance(text, str) for text in value):
        raise InvalidInput(f"snapshot field {key!r} must hold card strings")
    return [parse_card(text) for text in value]


def read_int_list(
    data: Mapping[str, Any], key: str, length: int | None, low: int, high: int
) -> list[int]:
    value = require(data, key)
    return ints_from_json(value, key, length, low, high)


def ints_from_json(value: Any, key: str, length: int | None, low: int, high: int) -> list[int]:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        size = "a list" if length is None else f"a list of {length}"
        raise InvalidInput(f"snapshot field {key!r} must be {size} whole numbers")
    for item in value:
        if not isinstance(item, int) or isinstance(item, bool) or not low <= item <= high:
            raise InvalidInput(f"snapshot field {key!r} holds a number outside {low}..{high}")
    return list(value)


def read_list(data: Mapping[str, Any], key: str, max_len: int) -> list[Any]:
    value = require(data, key)
    if not isinstance(value, list) or len(value) > max_len:
        raise InvalidInput(f"snapshot field {key!r} must be a list of at most {max_len} items")
    return value


def check_each_card_once(groups: Sequence[Sequence[Card]], deck: Sequence[Card]) -> None:
    """Raise unless the groups together hold every card of ``deck`` exactly once."""
    seen = [card for group in groups for card in group]
    if len(seen) != len(deck) or sorted(seen) != sorted(deck):
        raise InvalidInput("snapshot is inconsistent: the cards do not add up to the deck")


def cards_json(cards: Sequence[Card]) -> list[str]:
    """Cards for a snapshot: short strings, readable in a log or a debugger."""
    return card_texts(cards)


def inconsistent(reason: str) -> InvalidInput:
    """The error for a snapshot whose fields are well formed but contradict each other."""
    return InvalidInput(f"snapshot is inconsistent: {reason}")
