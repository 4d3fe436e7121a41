"""Verified tokens are remembered until they expire, in a form the collector does not walk."""

from __future__ import annotations

import gc
import time

import jwt
import pytest

from cardtable.platform.tokens import (
    ALGORITHM,
    BOT,
    ISSUER,
    Principal,
    TokenCodec,
    TokenRefusedError,
    bearer_token,
)

KEY = "test-signing-key-0123456789abcdef0123456789"


def test_a_remembered_token_names_the_same_player_until_it_expires() -> None:
    codec = TokenCodec(KEY)
    token = codec.issue("robot-7", kind=BOT, ttl_seconds=1)
    first = codec.verify(token)
    assert first == Principal("robot-7", BOT) and first.is_bot
    assert codec.verify(token) == first  # from memory this time
    expires_at = int(time.time()) + 1  # as issue() set it, or a second later
    time.sleep(max(0.0, expires_at + 1.05 - time.time()))
    with pytest.raises(TokenRefusedError, match="expired"):
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


def _signed(claims: dict[str, object]) -> str:
    return jwt.encode(
        {"iss": ISSUER, "iat": int(time.time()), "exp": int(time.time()) + 60, **claims},
        KEY,
        algorithm=ALGORITHM,
    )


@pytest.mark.parametrize(
    ("player_id", "reason"),
    [
        ("", "missing"),
        ("x" * 129, "longer than 128"),
        ("alice ", "white space"),
        (" alice", "white space"),
        ("ali\x00ce", "control or formatting"),
        ("alice\u202e", "control or formatting"),
        ("al\u200bice", "control or formatting"),
        ("a\u2028b", "control or formatting"),
        ("bot:t1:2", "computer players"),
        ("bots:replica", "computer players"),
    ],
)
def test_player_ids_that_could_be_borrowed_or_confused_are_refused(
    player_id: str, reason: str
) -> None:
    with pytest.raises(TokenRefusedError, match=reason):
        TokenCodec(KEY).verify(_signed({"sub": player_id, "kind": "person"}))


def test_player_ids_are_normalised_so_one_name_is_one_player() -> None:
    codec = TokenCodec(KEY)
    decomposed, composed = "Andre\u0301", "Andr\u00e9"
    assert codec.verify(_signed({"sub": decomposed})).player_id == composed
    assert codec.verify(_signed({"sub": composed})).player_id == composed
    # a computer player's own id is a bot token's, not a person's
    assert codec.verify(_signed({"sub": "bots:r1", "kind": BOT})).is_bot


def test_a_token_lives_at_most_the_maximum_lifetime() -> None:
    codec = TokenCodec(KEY, max_lifetime_seconds=3600)
    now = int(time.time())
    century = _signed({"sub": "alice", "iat": now, "exp": now + 100 * 365 * 86400})
    with pytest.raises(TokenRefusedError, match="longer than the 3600 s"):
        codec.verify(century)
    no_issue_time = jwt.encode(
        {"sub": "alice", "iss": ISSUER, "exp": now + 60}, KEY, algorithm=ALGORITHM
    )
    with pytest.raises(TokenRefusedError, match="iat"):
        codec.verify(no_issue_time)
    with pytest.raises(ValueError, match="at most"):
        codec.issue("alice", ttl_seconds=7200)
    assert codec.verify(codec.issue("alice", ttl_seconds=3600)).player_id == "alice"
    assert TokenCodec(KEY).max_lifetime_seconds == 86_400


def test_a_bot_token_names_its_one_seat() -> None:
    codec = TokenCodec(KEY)
    scoped = codec.verify(codec.issue("bots:r1", BOT, bot_seat=("t-1", 2)))
    assert scoped.plays_bot_seat("t-1", 2)
    assert not scoped.plays_bot_seat("t-1", 3) and not scoped.plays_bot_seat("t-2", 2)
    assert codec.verify(codec.issue("bots:r1", BOT, bot_seat=("t-1", 2))) == scoped
    unscoped = codec.verify(codec.issue("bots:r1", BOT))
    assert not unscoped.plays_bot_seat("t-1", 2)
    person = codec.verify(_signed({"sub": "alice", "seat": "t-1/2"}))
    assert not person.plays_bot_seat("t-1", 2)
    with pytest.raises(TokenRefusedError, match="seat claim"):
        codec.verify(_signed({"sub": "bots:r1", "kind": BOT, "seat": "t-1"}))


def test_two_authorization_headers_are_refused() -> None:
    one = ("authorization", "Bearer a")
    assert bearer_token([one]) == "a"
    with pytest.raises(TokenRefusedError, match="one authorization header"):
        bearer_token([one, ("Authorization", "Bearer b")])
