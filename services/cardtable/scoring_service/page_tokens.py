"""Opaque page tokens: where the next page starts, bound to the request that made them.

A token is URL-safe base64 of a small JSON object naming its kind. It is not secret (it holds
only what the previous page showed); decoding checks its shape, and anything else is
:class:`BadPageTokenError`, which the servicer turns into INVALID_ARGUMENT.

    >>> token = encode_page_token("leaderboard", game="hearts", rating=1520.5, player="ann")
    >>> decode_page_token(token, "leaderboard")
    {'game': 'hearts', 'rating': 1520.5, 'player': 'ann'}
    >>> decode_page_token(token, "games")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    cardtable.scoring_service.page_tokens.BadPageTokenError: the page token is for another request
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any

MAX_TOKEN_CHARS = 1024


class BadPageTokenError(ValueError):
    """The page token was not made by this service for this request."""


def encode_page_token(kind: str, **position: Any) -> str:
    """A token for the page after ``position``."""
    text = json.dumps({"kind": kind, **position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_page_token(token: str, kind: str) -> dict[str, Any]:
    """The position in ``token``; raises :class:`BadPageTokenError` for anything malformed."""
    if len(token) > MAX_TOKEN_CHARS:
        raise BadPageTokenError("the page token is too long")
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        raise BadPageTokenError("the page token is malformed") from None
    if not isinstance(data, dict):
        raise BadPageTokenError("the page token is malformed")
    if data.pop("kind", None) != kind:
        raise BadPageTokenError("the page token is for another request")
    return data


#: Integers in a position are stream sequences and seats: PostgreSQL's bigint holds them.
MAX_TOKEN_INT = 2**63 - 1


def token_field(position: dict[str, Any], name: str, kind: type) -> Any:
    """One field of a decoded position, checked to be of ``kind`` and a value the database
    can compare: a finite float (JSON's NaN would compare false with every rating and give
    the first page again), an int from 0 to ``MAX_TOKEN_INT``, a string without NUL.

    >>> token_field({"rating": float("nan")}, "rating", float)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cardtable.scoring_service.page_tokens.BadPageTokenError: the page token is malformed
    """
    value = position.get(name)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise BadPageTokenError("the page token is malformed")
    storable = (
        (not isinstance(value, float) or math.isfinite(value))
        and (not isinstance(value, int) or isinstance(value, bool) or 0 <= value <= MAX_TOKEN_INT)
        and (not isinstance(value, str) or "\x00" not in value)
    )
    if not storable:
        raise BadPageTokenError("the page token is malformed")
    return value
