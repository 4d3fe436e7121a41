"""Protobuf's wire format by hand, where building messages through the runtime is too slow.

``google.protobuf.Struct.update`` builds a Struct one value at a time, each a call into the
protobuf runtime from Python: for a seat's view (a hundred values) it took the rules service
more time than computing the view. Encoding the same dict to bytes here and parsing them into
the destination field in one call (``MergeFromString``, in C) gives an equal message for much
less CPU, and with no copy of the finished Struct into the reply
(docs/proving-it.md#settings-the-figures-chose). A property test holds the two equal for
any JSON-ready data. The hostile-input fuzzer uses the same helpers to wrap bytes that no
message could hold inside a well-formed outer message.

The wire format: https://protobuf.dev/programming-guides/encoding/
"""

from __future__ import annotations

import struct as _binary
from collections.abc import Mapping
from typing import Any

_DOUBLE = _binary.Struct("<d").pack
# google.protobuf.Value's fields with their tags (field number << 3 | wire type).
_NULL = b"\x08\x00"  # null_value = 1, varint NULL_VALUE (0)
_NUMBER = b"\x11"  # number_value = 2, 64-bit
_STRING = b"\x1a"  # string_value = 3, length-delimited
_TRUE = b"\x20\x01"  # bool_value = 4, varint
_FALSE = b"\x20\x00"
_STRUCT = b"\x2a"  # struct_value = 5, length-delimited
_LIST = b"\x32"  # list_value = 6, length-delimited
# Struct.fields = 1 (its map entries) and ListValue.values = 1; a map entry's value = 2.
_FIELD_1 = b"\x0a"
_ENTRY_VALUE = b"\x12"
_SMALL = tuple(bytes((number,)) for number in range(0x80))
# Views repeat the same keys and short strings (cards, verbs, phases) over and over, so their
# encodings are kept; only short ones and only so many, so that no input can grow them.
_CACHE_LIMIT = 4096
_CACHED_CHARS = 32
_entry_heads: dict[str, bytes] = {}
_strings: dict[str, bytes] = {}


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a base-128 varint: seven bits a byte, low bits first.

    Only sizes and field keys are written this way, never negative; one is refused rather
    than looked up from the end of the table.
    """
    if value < 0x80:
        if value < 0:
            raise ValueError(f"a varint here is a size or a key, never negative: {value}")
        return _SMALL[value]
    encoded = bytearray()
    while value > 0x7F:
        encoded.append(value & 0x7F | 0x80)
        value >>= 7
    encoded.append(value)
    return bytes(encoded)


def length_delimited(number: int, value: bytes) -> bytes:
    """Field ``number`` holding ``value`` (wire type 2: bytes, strings, messages)."""
    return varint(number << 3 | 2) + varint(len(value)) + value


def struct_bytes(data: Mapping[str, Any]) -> bytes:
    """``data`` encoded as a ``google.protobuf.Struct``, equal to what ``Struct.update`` makes.

    Values may be None, bools, numbers (which become doubles, as Struct defines them), strings,
    mappings with string keys, and lists or tuples of these; anything else is a ValueError.
    """
    parts: list[bytes] = []
    for key, value in data.items():
        head = _entry_heads.get(key)
        if head is None:
            head = _entry_head(key)
        value_bytes = _value_bytes(value)
        size = len(value_bytes)
        # Sizes under 128 are one byte: looked up here rather than through varint(), which
        # a view calls hundreds of times.
        value_size = _SMALL[size] if size < 0x80 else varint(size)
        size += len(head) + len(value_size)
        parts += (_FIELD_1, _SMALL[size] if size < 0x80 else varint(size), head, value_size)
        parts.append(value_bytes)
    return b"".join(parts)


def _entry_head(key: str) -> bytes:
    """A map entry's key field and its value's tag: all of the entry before the value's size."""
    if not isinstance(key, str):
        raise ValueError(f"a Struct key must be a string, not {type(key).__name__}")
    encoded = key.encode()
    head = _FIELD_1 + varint(len(encoded)) + encoded + _ENTRY_VALUE
    if len(_entry_heads) < _CACHE_LIMIT and len(key) <= _CACHED_CHARS:
        _entry_heads[key] = head
    return head


def _string_value(text: str) -> bytes:
    encoded = text.encode()
    value = _STRING + varint(len(encoded)) + encoded
    if len(_strings) < _CACHE_LIMIT and len(text) <= _CACHED_CHARS:
        _strings[text] = value
    return value


def _value_bytes(value: Any) -> bytes:
    """One ``google.protobuf.Value``; the common kinds are checked first, by exact type."""
    kind = type(value)
    if kind is str:
        return _strings.get(value) or _string_value(value)
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is int or kind is float:
        return _NUMBER + _DOUBLE(value)
    if value is None:
        return _NULL
    if kind is list or kind is tuple:
        parts: list[bytes] = []
        for item in value:
            # Most items are short strings (cards): their encodings are looked up here.
            item_bytes = (type(item) is str and _strings.get(item)) or _value_bytes(item)
            size = len(item_bytes)
            parts += (_FIELD_1, _SMALL[size] if size < 0x80 else varint(size), item_bytes)
        inner = b"".join(parts)
        return _LIST + varint(len(inner)) + inner
    if isinstance(value, Mapping):
        inner = struct_bytes(value)
        return _STRUCT + varint(len(inner)) + inner
    # Subclasses of the plain kinds (an IntEnum, a StrEnum) go as their plain values.
    if isinstance(value, bool):
        return _value_bytes(bool(value))
    if isinstance(value, int | float):
        return _value_bytes(float(value))
    if isinstance(value, str):
        return _value_bytes(str.__str__(value))
    if isinstance(value, list | tuple):
        return _value_bytes(list(value))
    raise ValueError(f"a Struct cannot hold a {kind.__name__}")
