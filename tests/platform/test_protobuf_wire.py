"""The hand-made wire encoding equals what the protobuf runtime makes of the same data."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from google.protobuf import struct_pb2, wrappers_pb2
from hypothesis import given
from hypothesis import strategies as st

from cardtable.platform.protobuf_wire import length_delimited, struct_bytes, varint

# What JSON-ready data may hold: Struct's own kinds, numbers as ints or floats, any strings
# (long ones and non-ASCII ones too, so that multi-byte lengths and UTF-8 are covered).
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False)
    | st.text(max_size=300)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=40)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=40), inner, max_size=12)
    ),
    max_leaves=200,
)
DATA = st.dictionaries(st.text(max_size=40), VALUES, max_size=12)


def runtime_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(data)
    return struct


@given(DATA)
def test_a_struct_equals_the_runtimes(data: dict[str, Any]) -> None:
    assert struct_pb2.Struct.FromString(struct_bytes(data)) == runtime_struct(data)


@given(DATA)
def test_encoding_twice_gives_the_same_bytes(data: dict[str, Any]) -> None:
    # the second time the keys and short strings come from the caches
    assert struct_bytes(data) == struct_bytes(data)


@pytest.mark.parametrize(
    "value",
    [float("nan"), -0.0, float("inf"), 2**53 + 1, 2**64 + 7, -(2**63), 1e308, "é🙂", ""],
    ids=repr,
)
def test_edge_values_give_the_runtimes_bytes(value: Any) -> None:
    """Bytes, not messages, are compared: messages hide NaN (never equal) and -0.0 (== 0.0).
    One key per map, as map order in bytes is the runtime's own choice."""
    data = {"value": [value, [value], {"in a map": value}]}
    assert struct_bytes(data) == runtime_struct(data).SerializeToString(deterministic=True)


def test_subclassed_values_are_encoded_as_their_plain_kinds() -> None:
    class Suit(enum.IntEnum):
        HEARTS = 3

    class Phase(enum.StrEnum):
        PLAY = "play"

    data = {"suit": Suit.HEARTS, "phase": Phase.PLAY, "cards": ("QS", "2C"), "ok": True}
    expected = {"suit": 3, "phase": "play", "cards": ["QS", "2C"], "ok": True}
    assert struct_pb2.Struct.FromString(struct_bytes(data)) == runtime_struct(expected)


@pytest.mark.parametrize("value", [object(), b"bytes", {1, 2}])
def test_what_a_struct_cannot_hold_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match="cannot hold"):
        struct_bytes({"x": value})


def test_a_key_must_be_a_string() -> None:
    with pytest.raises(ValueError, match="key must be a string"):
        struct_bytes({1: "x"})  # type: ignore[dict-item]


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_a_varint_reads_back_as_the_runtime_reads_it(value: int) -> None:
    # UInt64Value's field 1 is a varint: tag 0x08, then the value.
    assert wrappers_pb2.UInt64Value.FromString(b"\x08" + varint(value)).value == value


@given(st.text(max_size=500))
def test_a_length_delimited_field_reads_back(text: str) -> None:
    # StringValue's field 1 is a string.
    assert wrappers_pb2.StringValue.FromString(length_delimited(1, text.encode())).value == text


def test_a_negative_varint_is_refused() -> None:
    with pytest.raises(ValueError, match="never negative"):
        varint(-1)
