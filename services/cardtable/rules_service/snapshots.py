"""A game state's snapshot as bytes: JSON, or the same document in MessagePack.

The snapshot travels only when no reference can stand in for it (a rebuilt or finished game, a
caller that keeps states itself), but then it is the largest thing in a call. MessagePack
writes the same document in fewer bytes and is read faster (docs/proving-it.md); JSON stays the
default, the encoding every caller before ``GameState.encoding`` sent. Either way the document
is untrusted input: the game's snapshot loader checks it before a state is built from it.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack

from cardtable.engine.errors import InvalidInput
from cardtable_api.rules.v1 import rules_pb2

#: Unspecified means JSON: every caller before ``GameState.encoding`` sent JSON.
JSON_ENCODINGS = frozenset(
    {rules_pb2.SNAPSHOT_ENCODING_UNSPECIFIED, rules_pb2.SNAPSHOT_ENCODING_JSON}
)
JSON = rules_pb2.SNAPSHOT_ENCODING_UNSPECIFIED
MSGPACK = rules_pb2.SNAPSHOT_ENCODING_MSGPACK
ENCODINGS = JSON_ENCODINGS | {MSGPACK}


def check_encoding(encoding: int) -> None:
    """InvalidInput for an encoding this service does not write or read."""
    if encoding not in ENCODINGS:
        raise InvalidInput(
            f"snapshot encoding {encoding} is not supported (0: JSON, 1: MessagePack)"
        )


def dump_snapshot(document: dict[str, Any], encoding: int) -> bytes:
    """``document`` (the engine's snapshot) as bytes in ``encoding``."""
    if encoding == MSGPACK:
        packed: bytes = msgpack.packb(document, use_bin_type=True)
        return packed
    return json.dumps(document, separators=(",", ":")).encode()


def load_snapshot(data: bytes, encoding: int) -> Any:
    """The document ``data`` holds; InvalidInput when it cannot be read as ``encoding``."""
    check_encoding(encoding)
    if encoding == MSGPACK:
        try:
            document = msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_no_ext)
        except (ValueError, TypeError, msgpack.UnpackException) as error:
            # malformed, truncated, trailing bytes, nested past the unpacker's stack, a map key
            # that is not a string, or an extension type
            raise InvalidInput(f"state snapshot is not valid MessagePack: {error}") from None
        try:
            # The snapshot loaders were written for JSON: bytes (or a timestamp) must not reach
            # them. Writing the document as JSON, in C, is the quickest way to find any.
            json.dumps(document)
        except (TypeError, ValueError):
            raise InvalidInput("state snapshot holds bytes, which no snapshot has") from None
        return document
    try:
        return json.loads(data)
    except ValueError as error:  # not UTF-8, not JSON, or an integer past Python's limit
        raise InvalidInput(f"state snapshot is not valid JSON: {error}") from None
    except RecursionError:  # "[[[[...]]]]" nested deeper than the parser's stack
        raise InvalidInput("state snapshot is nested too deeply") from None


def _no_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"extension type {code}")
