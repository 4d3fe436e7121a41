"""Tokens a hostile client might present: forged, expired, or with claims that do not hold.

Each is built for a real player of a real table, so the only thing wrong with the request
that carries it is the token: a service that let it through would accept a stranger's move.
"""

from __future__ import annotations

import base64
import json
import random
import time

import jwt

from cardtable.platform.tokens import ALGORITHM, ISSUER, MAX_PLAYER_ID_CHARS

#: The header of an unsigned token ("alg": "none"), which must never be accepted.
NONE_HEADER = b'{"alg":"none","typ":"JWT"}'


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(player_id: str, **changes: object) -> dict[str, object]:
    now = int(time.time())
    claims: dict[str, object] = {
        "sub": player_id,
        "kind": "person",
        "iss": ISSUER,
        "iat": now,
        "exp": now + 3600,
    }
    claims.update(changes)
    return {name: value for name, value in claims.items() if value is not None}


def forged(player_id: str, valid_token: str, rng: random.Random) -> str:
    """A token for ``player_id`` that the service's key did not sign."""
    wrong_key = "".join(rng.choice("abcdefghijklmnop0123456789") for _ in range(40))
    header, payload, signature = valid_token.split(".")
    stranger_payload = _b64(json.dumps(_claims(player_id + "x")).encode())
    choices = [
        jwt.encode(_claims(player_id), wrong_key, algorithm=ALGORITHM),
        f"{_b64(NONE_HEADER)}.{_b64(json.dumps(_claims(player_id)).encode())}.",
        f"{header}.{stranger_payload}.{signature}",  # someone else's claims, this signature
        f"{header}.{payload}.{signature[::-1]}",
        valid_token[: rng.randrange(1, len(valid_token))],
        "".join(rng.choice("abcXYZ019-_.") for _ in range(rng.randrange(1, 300))),
    ]
    return rng.choice(choices)


def expired(player_id: str, key: str, rng: random.Random) -> str:
    """A token signed with the right key whose expiry is in the past."""
    now = int(time.time())
    issued = now - rng.randrange(10, 10_000_000)
    ended = now - rng.randrange(5, 10_000_000)
    return jwt.encode(
        _claims(player_id, iat=min(issued, ended), exp=ended), key, algorithm=ALGORITHM
    )


def bad_claims(player_id: str, key: str, rng: random.Random) -> str:
    """A token signed with the right key whose claims are missing or wrong."""
    now = int(time.time())
    too_long = "p" * (MAX_PLAYER_ID_CHARS + 1)
    changes: list[dict[str, object]] = [
        {"exp": None},
        {"sub": None},
        {"iss": None},
        {"iss": "someone-else"},
        {"kind": "admin"},
        {"sub": ""},
        {"sub": too_long},
        {"sub": 12345},
        {"nbf": now + 3600},
        {"exp": "tomorrow"},
    ]
    return jwt.encode(_claims(player_id, **rng.choice(changes)), key, algorithm=ALGORITHM)


def bad_authorization(token: str, rng: random.Random) -> tuple[tuple[str, str], ...]:
    """Metadata with no usable bearer token."""
    return rng.choice(
        [
            (),
            (("authorization", ""),),
            (("authorization", "Bearer"),),
            (("authorization", "Bearer   "),),
            (("authorization", f"Basic {token}"),),
            (("authorization", token),),
            (("x-authorization", f"Bearer {token}"),),
        ]
    )


def signed(player_id: str, key: str) -> str:
    """A person's token for ``player_id``, signed with the service's own key."""
    return jwt.encode(_claims(player_id), key, algorithm=ALGORITHM)
