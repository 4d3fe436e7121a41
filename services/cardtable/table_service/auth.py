"""Player identity tokens: JWTs signed with HS256 and a key from the environment.

Every mutating call carries ``authorization: Bearer <token>``. The token names the player
(``sub``) and whether it is a person or a computer player (``kind``). The bot service signs
its own tokens with the same key: it is an internal service, and a bot token may act only
for seats that a computer player holds.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import jwt

from cardtable.table_service.errors import NotAuthenticatedError

ALGORITHM = "HS256"
ISSUER = "cardtable"
PERSON = "person"
BOT = "bot"
MAX_PLAYER_ID_CHARS = 128
#: Far above any token this service issues (~300 characters). A header cannot carry much more,
#: but a token inside a Pipeline call could be megabytes: refused before it is decoded.
MAX_TOKEN_CHARS = 4096
VERIFIED_CACHE_SIZE = 100_000


@dataclass(frozen=True)
class Principal:
    """Who is calling."""

    player_id: str
    kind: str

    @property
    def is_bot(self) -> bool:
        return self.kind == BOT


class TokenCodec:
    """Issues and verifies tokens with one signing key (rotated by redeploying with a new one)."""

    def __init__(self, key: str, *, previous_keys: tuple[str, ...] = ()) -> None:
        if len(key) < 32:
            raise ValueError("the token signing key must be at least 32 characters")
        self._key = key
        self._verification_keys = (key, *previous_keys)
        # Checking a signature costs more than the rest of a move's handling; a client sends
        # the same token with every call, so verified tokens are remembered until they expire.
        # Each as a tuple of a string, a string and a float, which the garbage collector stops
        # tracking: up to 100,000 principals with their tuples would be 200,000 objects for
        # every full collection of the table service to walk.
        self._verified: OrderedDict[str, tuple[str, str, float]] = OrderedDict()

    def issue(self, player_id: str, kind: str = PERSON, ttl_seconds: float = 3600.0) -> str:
        """A signed token for ``player_id`` valid for ``ttl_seconds``."""
        if kind not in (PERSON, BOT):
            raise ValueError(f"unknown player kind {kind!r}")
        now = int(time.time())
        claims = {
            "sub": player_id,
            "kind": kind,
            "iss": ISSUER,
            "iat": now,
            "exp": now + int(ttl_seconds),
        }
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def verify(self, token: str) -> Principal:
        """The principal a valid token names; raises :class:`NotAuthenticatedError` otherwise."""
        if len(token) > MAX_TOKEN_CHARS:
            raise NotAuthenticatedError(f"invalid token: longer than {MAX_TOKEN_CHARS} characters")
        remembered = self._verified.get(token)
        if remembered is not None:
            player_id, kind, expires_at = remembered
            if time.time() < expires_at:
                return Principal(player_id, kind)
            del self._verified[token]
        principal, expires_at = self._check(token)
        self._verified[token] = (principal.player_id, principal.kind, expires_at)
        if len(self._verified) > VERIFIED_CACHE_SIZE:
            self._verified.popitem(last=False)
        return principal

    def _check(self, token: str) -> tuple[Principal, float]:
        last_error: Exception | None = None
        for key in self._verification_keys:
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=[ALGORITHM],
                    issuer=ISSUER,
                    options={"require": ["exp", "sub", "iss"]},
                )
            except jwt.InvalidSignatureError as error:
                last_error = error
                continue
            except jwt.ExpiredSignatureError:
                raise NotAuthenticatedError("the token has expired") from None
            except jwt.InvalidTokenError as error:
                raise NotAuthenticatedError(f"invalid token: {error}") from None
            return _principal(claims), float(claims["exp"])
        raise NotAuthenticatedError(f"invalid token: {last_error}")


def _principal(claims: dict[str, object]) -> Principal:
    player_id, kind = claims.get("sub"), claims.get("kind", PERSON)
    if not isinstance(player_id, str) or not 0 < len(player_id) <= MAX_PLAYER_ID_CHARS:
        raise NotAuthenticatedError("invalid token: the player id is missing or too long")
    if kind not in (PERSON, BOT):
        raise NotAuthenticatedError("invalid token: unknown player kind")
    return Principal(player_id=player_id, kind=str(kind))


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token from ``authorization: Bearer ...`` metadata, or :class:`NotAuthenticatedError`."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            raise NotAuthenticatedError("the authorization header must be 'Bearer <token>'")
    raise NotAuthenticatedError("this call needs a player token (authorization: Bearer <token>)")
