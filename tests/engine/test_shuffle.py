"""Fair deals: the seed determines the deck, the commitment binds the seed."""

from collections import Counter

import pytest

from cardtable.engine.cards import FULL_DECK, deck_of_ranks
from cardtable.engine.errors import InvalidInput
from cardtable.engine.shuffle import (
    check_shuffle,
    commitment,
    deck_order_from_seed,
    seed_from_hex,
)


def test_same_seed_same_order_and_a_permutation() -> None:
    seed = bytes(range(32))
    first = deck_order_from_seed(seed, FULL_DECK)
    assert first == deck_order_from_seed(seed, FULL_DECK)
    assert sorted(first) == sorted(FULL_DECK)
    assert first != deck_order_from_seed(bytes(range(1, 33)), FULL_DECK)


def test_positions_are_roughly_uniform() -> None:
    # 32-card Belote deck: where does the first card land over many seeds?
    deck = deck_of_ranks(5)
    landing = Counter(
        deck_order_from_seed(index.to_bytes(32, "big"), deck).index(deck[0])
        for index in range(3200)
    )
    assert set(landing) == set(range(len(deck)))
    assert max(landing.values()) < 3 * min(landing.values())


def test_check_shuffle_catches_wrong_seed_and_wrong_order() -> None:
    seed = bytes(range(32))
    order = deck_order_from_seed(seed, FULL_DECK)
    assert check_shuffle(seed.hex(), commitment(seed), FULL_DECK, order) is None
    other = bytes(32)
    assert "commitment" in (check_shuffle(other.hex(), commitment(seed), FULL_DECK, order) or "")
    swapped = (order[1], order[0], *order[2:])
    assert "deck order" in (check_shuffle(seed.hex(), commitment(seed), FULL_DECK, swapped) or "")


def test_bad_seeds_are_refused() -> None:
    with pytest.raises(InvalidInput):
        seed_from_hex("zz")
    with pytest.raises(InvalidInput):
        seed_from_hex("00" * 5)
    with pytest.raises(InvalidInput):
        deck_order_from_seed(b"short", FULL_DECK)
