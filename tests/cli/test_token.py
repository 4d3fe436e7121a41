"""``cardtable token``: a token the table service accepts, or a sentence and exit 2."""

from __future__ import annotations

import pytest

from cardtable.cli.main import main
from cardtable.platform.tokens import TokenCodec

KEY = "k" * 40


def test_a_person_token_is_one_the_table_service_accepts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOKEN_SIGNING_KEY", KEY)
    assert main(["token", "alice", "--ttl", "60"]) == 0
    principal = TokenCodec(KEY).verify(capsys.readouterr().out.strip())
    assert (principal.player_id, principal.kind, principal.bot_seat) == ("alice", "person", None)


def test_a_bot_token_names_its_seat(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOKEN_SIGNING_KEY", KEY)
    assert main(["token", "bot:tester", "--kind", "bot", "--seat", "t-1a2b/3"]) == 0
    principal = TokenCodec(KEY).verify(capsys.readouterr().out.strip())
    assert principal.plays_bot_seat("t-1a2b", 3)


@pytest.mark.parametrize(
    ("key", "argv", "sentence"),
    [
        (None, ["alice"], "set TOKEN_SIGNING_KEY"),
        ("short", ["alice"], "TOKEN_SIGNING_KEY is 5 characters; the table service needs at"),
        (KEY, ["bot:me"], "player ids starting with bot: or bots: are the computer players'"),
        (KEY, ["bot:me", "--kind", "bot"], "a bot token names the seat it acts for"),
        (KEY, ["bot:me", "--kind", "bot", "--seat", "t1"], "--seat takes TABLE/SEAT"),
        (KEY, ["alice", "--seat", "t1/0"], "--seat is for bot tokens"),
        (KEY, ["alice", "--ttl", "200000"], "a token lives at most 86400 s"),
    ],
)
def test_refusals_say_why_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: str | None,
    argv: list[str],
    sentence: str,
) -> None:
    if key is None:
        monkeypatch.delenv("TOKEN_SIGNING_KEY", raising=False)
    else:
        monkeypatch.setenv("TOKEN_SIGNING_KEY", key)
    assert main(["token", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert sentence in captured.err
