"""Broken bytes and broken game states, built so that they cannot be valid by chance.

Random bytes often happen to decode as protobuf (unknown fields are skipped), so each shape
here is invalid by construction: a field number 0 or a reserved wire type up front, a length
that runs past the end, or a string field holding bytes that are not UTF-8.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

INVALID_FIRST_BYTES = (0x00, 0x06, 0x07, 0x0E, 0x0F, 0x16, 0x17)


def undecodable_bytes(rng: random.Random, string_field_first: bool) -> bytes:
    """Bytes that no protobuf message decodes from.

    ``string_field_first``: field 1 of the target message is a string, so invalid UTF-8 in
    it is a decoding error too.
    """
    tail = rng.randbytes(rng.randrange(0, 200))
    shapes = [
        bytes([rng.choice(INVALID_FIRST_BYTES)]) + tail,
        # field 1, length-delimited, claiming more bytes than follow
        bytes([0x0A, 0xFF, 0x7F]) + tail[:100],
    ]
    if string_field_first:
        shapes.append(bytes([0x0A, 0x03, 0xFF, 0xFE, 0xC0]))
    return rng.choice(shapes)


def broken_snapshot(real: bytes, rng: random.Random) -> bytes:
    """Snapshot bytes that are no valid game state (from scratch or by breaking ``real``)."""
    shapes = [
        lambda: rng.randbytes(rng.randrange(0, 500)),
        lambda: b"\xff\xfe" + real,
        lambda: real[: rng.randrange(0, len(real))],
        lambda: json.dumps(rng.choice([None, 0, -1, 1e308, "x", [], [1, 2], True])).encode(),
        lambda: json.dumps({"format": "cardtable-state", "version": 1, "junk": [1]}).encode(),
        lambda: _nested(rng.randrange(1, 100_000)),
    ]
    return rng.choice(shapes)()


def tampered_snapshot(real: bytes, rng: random.Random) -> bytes:
    """``real`` with one key removed, one value of another type, or one leaf changed.

    Any of these may still be a consistent game (an option removed takes its default, a bid
    set to ``null`` is a bid not made yet), so the rules service may accept it: what must
    never happen is a crash or an answer other than OK or a refusal.
    """
    data = json.loads(real)
    shape = rng.randrange(4)
    if shape == 0:
        return json.dumps(_without_a_key(data, rng)).encode()
    if shape == 1:
        return json.dumps(_with_wrong_type(data, rng)).encode()
    path = rng.choice(_leaf_paths(data))
    parent = _at(data, path[:-1])
    value = parent[path[-1]]
    if isinstance(value, bool):
        parent[path[-1]] = not value
    elif isinstance(value, int):
        parent[path[-1]] = rng.choice([-1, 0, 1, 2, 5, 13, 52, 99, 2**31, -(2**63), 10**30])
    elif isinstance(value, str):
        parent[path[-1]] = rng.choice(["", "AS", "10H", "2C", "QS", "ZZ", "pass", "x" * 1000])
    else:
        parent[path[-1]] = rng.random() * 100
    return json.dumps(data).encode()


def _nested(depth: int) -> bytes:
    """A deeply nested list: parsers that recurse must not fall over."""
    nested = "[" * depth + "]" * depth
    return f'{{"format": "cardtable-state", "version": 1, "state": {nested}}}'.encode()


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        items: list[tuple[Any, Any]] = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data))
    else:
        return []
    paths: list[tuple[Any, ...]] = []
    for key, value in items:
        paths.append((*prefix, key))
        paths.extend(_paths(value, (*prefix, key)))
    return paths


def _leaf_paths(data: Any) -> list[tuple[Any, ...]]:
    leaves = [path for path in _paths(data) if not isinstance(_at(data, path), dict | list)]
    return leaves or [next(iter(_paths(data)))]


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _without_a_key(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    broken = copy.deepcopy(data)
    keyed = [path for path in _paths(broken) if isinstance(_at(broken, path[:-1]), dict)]
    path = rng.choice(keyed)
    del _at(broken, path[:-1])[path[-1]]
    return broken


def _with_wrong_type(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    broken = copy.deepcopy(data)
    path = rng.choice(_paths(broken))
    value = _at(broken, path)
    wrong = [
        other
        for other in (None, "x", {"a": 1}, [None, "x"], 1.5, 7, True)
        if type(other) is not type(value)
    ]
    _at(broken, path[:-1])[path[-1]] = rng.choice(wrong)
    return broken
