"""Verified tokens are remembered until they expire, in a form the collector does not walk."""

from __future__ import annotations

import gc
import time

import pytest

from cardtable.table_service.auth import BOT, Principal, TokenCodec
from cardtable.table_service.errors import NotAuthenticatedError

KEY = "test-signing-key-0123456789abcdef0123456789"


def test_a_remembered_token_names_the_same_player_until_it_expires() -> None:
    codec = TokenCodec(KEY)
    token = codec.issue("robot-7", kind=BOT, ttl_seconds=1)
    first = codec.verify(token)
    assert first == Principal("robot-7", BOT) and first.is_bot
    assert codec.verify(token) == first  # from memory this time
    expires_at = int(time.time()) + 1  # as issue() set it, or a second later
    time.sleep(max(0.0, expires_at + 1.05 - time.time()))
    with pytest.raises(NotAuthenticatedError, match="expired"):
        codec.verify(token)


def test_remembered_tokens_add_nothing_for_the_garbage_collector_to_walk() -> None:
    codec = TokenCodec(KEY)
    tokens = [codec.issue(f"player-{number}") for number in range(2000)]
    codec.verify(tokens[0])
    gc.collect()
    tracked_before = len(gc.get_objects())
    for token in tokens:
        codec.verify(token)
    gc.collect()
    assert len(gc.get_objects()) - tracked_before < 50
    assert codec.verify(tokens[1999]).player_id == "player-1999"
