"""Fair deals: a deck order derived from a secret seed, and the commitment that binds it.

The table service draws a 32-byte seed from a cryptographically secure source (outside the
engine), publishes ``commitment(seed)`` before the deal, and reveals the seed after it. Anyone
holding the log can then recompute the deck order from the seed and check the commitment, so
the deal was provably fixed before play began.

The derivation is a Fisher-Yates shuffle driven by HMAC-SHA256(seed, counter) blocks, with
rejection sampling so every permutation is equally likely. It is deterministic and pure: the
same seed and deck always give the same order.

>>> from cardtable.engine.cards import FULL_DECK, format_cards
>>> seed = bytes(32)
>>> len(deck_order_from_seed(seed, FULL_DECK))
52
>>> commitment(seed)[:16]
'66687aadf862bd77'
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from typing import TypeVar

from cardtable.engine.cards import Card
from cardtable.engine.errors import InvalidInput

SEED_BYTES = 32
Item = TypeVar("Item")


def commitment(seed: bytes) -> str:
    """SHA-256 of the seed, hex: published before the deal, checked after it."""
    return hashlib.sha256(seed).hexdigest()


def _random_words(seed: bytes) -> Iterator[int]:
    """An endless stream of 32-bit words: HMAC-SHA256(seed, 0), (seed, 1), ... split up."""
    counter = 0
    while True:
        block = hmac.new(seed, counter.to_bytes(8, "big"), hashlib.sha256).digest()
        for offset in range(0, len(block), 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def _below(words: Iterator[int], bound: int) -> int:
    """A uniform integer in ``0..bound-1`` (rejection sampling removes the modulo bias)."""
    limit = (1 << 32) - ((1 << 32) % bound)
    for word in words:
        if word < limit:
            return word % bound
    raise AssertionError("the word stream is endless")  # pragma: no cover


def deck_order_from_seed(seed: bytes, deck: Sequence[Item]) -> tuple[Item, ...]:
    """The deck order the seed determines: a uniform permutation of ``deck``.

    Any sequence works (card numbers, or the card strings a service receives), so a caller
    that knows nothing about cards can still shuffle the deck the rules service gave it.
    """
    if len(seed) != SEED_BYTES:
        raise InvalidInput(f"a shuffle seed is {SEED_BYTES} bytes")
    order = list(deck)
    words = _random_words(seed)
    for index in range(len(order) - 1, 0, -1):
        other = _below(words, index + 1)
        order[index], order[other] = order[other], order[index]
    return tuple(order)


def seed_from_hex(text: str) -> bytes:
    """A seed from its hex form, as events and records carry it."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise InvalidInput("a shuffle seed is written as hex") from None
    if len(seed) != SEED_BYTES:
        raise InvalidInput(f"a shuffle seed is {SEED_BYTES} bytes")
    return seed


def check_shuffle(
    seed_hex: str, commitment_hex: str, deck: Sequence[Card], order: Sequence[Card]
) -> str | None:
    """Why a revealed seed does not prove a deal, or ``None`` when it does."""
    seed = seed_from_hex(seed_hex)
    if commitment(seed) != commitment_hex.lower():
        return "the revealed seed does not match the published commitment"
    if tuple(order) != deck_order_from_seed(seed, deck):
        return "the deck order is not the one the revealed seed produces"
    return None
