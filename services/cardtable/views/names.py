"""The closed sets of a view (phases, suits, contracts, passing directions) as enum numbers.

Kept in one place so that the encoder and the decoder cannot disagree, and so that the engine's
phase names map to enums here only (a view's ``Phase`` and a ``GameStatus``'s alike).
"""

from __future__ import annotations

from typing import TypeVar

from cardtable_api.common.v1 import common_pb2, views_pb2

Key = TypeVar("Key")
Value = TypeVar("Value")

PHASES: dict[str, views_pb2.Phase.ValueType] = {
    "deal": views_pb2.PHASE_DEAL,
    "bid": views_pb2.PHASE_BID,
    "contract": views_pb2.PHASE_CONTRACT,
    "discard": views_pb2.PHASE_DISCARD,
    "exchange": views_pb2.PHASE_EXCHANGE,
    "pass": views_pb2.PHASE_PASS,
    "play": views_pb2.PHASE_PLAY,
    "over": views_pb2.PHASE_OVER,
}

#: The same phases as ``GameStatus.Phase``, which repeats ``Phase`` name for name (common.proto
#: cannot import views.proto, which imports it).
STATUS_PHASES: dict[str, common_pb2.GameStatus.Phase.ValueType] = {
    name: common_pb2.GameStatus.Phase.Value(views_pb2.Phase.Name(phase))
    for name, phase in PHASES.items()
}

#: Suit letters as the engine writes them; "" (or None) is no suit.
SUITS: dict[str, views_pb2.Suit.ValueType] = {
    "C": views_pb2.SUIT_CLUBS,
    "D": views_pb2.SUIT_DIAMONDS,
    "H": views_pb2.SUIT_HEARTS,
    "S": views_pb2.SUIT_SPADES,
}

#: 3-5-8's contracts as the engine writes them; "" is none named yet.
CONTRACTS: dict[str, views_pb2.Contract.ValueType] = {
    "C": views_pb2.CONTRACT_CLUBS,
    "D": views_pb2.CONTRACT_DIAMONDS,
    "H": views_pb2.CONTRACT_HEARTS,
    "S": views_pb2.CONTRACT_SPADES,
    "NT": views_pb2.CONTRACT_NO_TRUMP,
    "MT": views_pb2.CONTRACT_MINIMUM_TRICKS,
}

PASS_DIRECTIONS: dict[str, views_pb2.PassDirection.ValueType] = {
    "left": views_pb2.PASS_DIRECTION_LEFT,
    "right": views_pb2.PASS_DIRECTION_RIGHT,
    "across": views_pb2.PASS_DIRECTION_ACROSS,
    "none": views_pb2.PASS_DIRECTION_NONE,
}


def inverse(table: dict[Key, Value]) -> dict[Value, Key]:
    """``table`` read the other way round."""
    return {value: key for key, value in table.items()}
