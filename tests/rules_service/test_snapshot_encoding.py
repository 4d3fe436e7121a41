"""Snapshots in MessagePack: the same document as JSON in fewer bytes, the same game played,
and anything that is not a snapshot refused as invalid input."""

from __future__ import annotations

import json

import msgpack
import pytest

from cardtable.engine.errors import InvalidInput
from cardtable.rules_service import codec
from cardtable.rules_service.servicer import apply_action, get_view
from cardtable.rules_service.snapshots import load_snapshot
from cardtable_api.rules.v1 import rules_pb2
from tests.rules_service.test_state_references import GAMES, _play, _started

MSGPACK = rules_pb2.SNAPSHOT_ENCODING_MSGPACK
JSON = rules_pb2.SNAPSHOT_ENCODING_JSON


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> codec.StateMemo:
    memo = codec.StateMemo()
    monkeypatch.setattr(codec, "MEMO", memo)
    return memo


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_game_played_by_messagepack_snapshots_is_the_game_played_by_json(
    game: str, players: int
) -> None:
    json_states: list[rules_pb2.GameState] = []
    packed_states: list[rules_pb2.GameState] = []
    by_json = _play(game, players, 17, by_reference=False, snapshots=json_states)
    by_packed = _play(
        game, players, 17, by_reference=False, encoding=MSGPACK, snapshots=packed_states
    )
    assert by_packed == by_json
    assert len(packed_states) == len(json_states) > 10
    for packed, plain in zip(packed_states, json_states, strict=True):
        assert packed.encoding == MSGPACK and plain.encoding == 0
        assert msgpack.unpackb(packed.snapshot) == json.loads(plain.snapshot)
        assert len(packed.snapshot) < len(plain.snapshot)


def test_a_reference_keeps_its_encoding_for_the_finished_games_snapshot() -> None:
    """A state by reference carries the caller's encoding; the finished game it ends in is
    answered by a snapshot in that encoding."""
    states: list[rules_pb2.GameState] = []
    _play("hearts", 4, 5, by_reference=True, encoding=MSGPACK, snapshots=states)
    assert all(state.encoding == MSGPACK for state in states)
    assert all(state.reference for state in states[:-1])
    finished = states[-1]
    assert finished.snapshot and msgpack.unpackb(finished.snapshot)["version"] >= 1


def _with_snapshot(snapshot: bytes, encoding: int = MSGPACK) -> rules_pb2.GameState:
    real = _started("hearts", 4, 3, by_reference=False, encoding=MSGPACK).state
    forged = rules_pb2.GameState()
    forged.CopyFrom(real)
    forged.snapshot, forged.encoding = snapshot, encoding  # type: ignore[assignment]
    return forged


def _document() -> dict[str, object]:
    real = _started("hearts", 4, 3, by_reference=False, encoding=MSGPACK).state
    document: dict[str, object] = msgpack.unpackb(real.snapshot)
    return document


@pytest.mark.parametrize(
    "snapshot",
    [
        b"\xc1",  # a byte MessagePack never uses
        msgpack.packb(_document())[:-3],  # cut short
        msgpack.packb(_document()) + b"\x00",  # trailing bytes
        b"\x91" * 5000 + b"\xc0",  # arrays nested 5,000 deep
        msgpack.packb({1: "a"}),  # a key that is not a string
        msgpack.packb([1, 2, 3]),  # not a document
        msgpack.packb(msgpack.ExtType(5, b"x")),
        msgpack.packb({**_document(), "hands": b"\x00\x01"}),  # bytes where cards belong
        json.dumps(_document()).encode(),  # JSON labelled MessagePack
    ],
    ids=["reserved", "truncated", "trailing", "deep", "int key", "array", "ext", "bin", "json"],
)
def test_what_is_not_a_messagepack_snapshot_is_invalid_input(snapshot: bytes) -> None:
    state = _with_snapshot(snapshot)
    with pytest.raises(InvalidInput):
        apply_action(rules_pb2.ApplyActionRequest(state=state, seat=0, action="pass 2C 3C 4C"))
    with pytest.raises(InvalidInput):
        get_view(rules_pb2.GetViewRequest(state=state, seat=0))


def test_an_unknown_encoding_is_invalid_input() -> None:
    real = _started("hearts", 4, 3, by_reference=False, encoding=MSGPACK).state
    with pytest.raises(InvalidInput, match="encoding 7"):
        get_view(rules_pb2.GetViewRequest(state=_with_snapshot(real.snapshot, 7), seat=0))
    with pytest.raises(InvalidInput, match="encoding 7"):
        _started("hearts", 4, 3, by_reference=False, encoding=7)


def test_json_is_read_whether_named_or_left_unspecified() -> None:
    document = _document()
    text = json.dumps(document).encode()
    assert load_snapshot(text, JSON) == load_snapshot(text, 0) == document
