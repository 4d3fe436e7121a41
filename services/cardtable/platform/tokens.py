"""Player identity tokens: JWTs signed with HS256 and a key from the environment.

Shared by the table service (which verifies them), the bot service and the client (which
sign or carry them) and the operator's ``cardtable token``: platform, so no service imports
another for them.

Every mutating call carries ``authorization: Bearer <token>``. The token names the player
(``sub``) and whether it is a person or a computer player (``kind``). The bot service signs
its own tokens with the same key: it is an internal service, and each of its tokens names the
one seat it may act for (``seat``: ``<table id>/<seat>``), a seat the bot service claimed; a
bot token without it acts for no seat.

Identities no one can borrow: a player id is NFC-normalised at verification, and refused when
it is empty, too long, starts or ends with white space, or holds control or format characters
(a right-to-left override, a NUL); ids that start with ``bot:`` or ``bots:`` are the computer
players' and refused in a person's token. A token lives at most ``max_lifetime_seconds`` (a
day by default) from its issue.
"""

from __future__ import annotations

import time
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import jwt

ALGORITHM = "HS256"
ISSUER = "cardtable"
PERSON = "person"
BOT = "bot"
MAX_PLAYER_ID_CHARS = 128
#: Far above any token this service issues (~300 characters). A header cannot carry much more,
#: but a token inside a Pipeline call could be megabytes: refused before it is decoded.
MAX_TOKEN_CHARS = 4096
VERIFIED_CACHE_SIZE = 100_000
DEFAULT_MAX_LIFETIME_SECONDS = 86_400.0
#: Player ids of computer players: a person's token never holds one.
RESERVED_PREFIXES = ("bot:", "bots:")
#: Unicode categories no player id may hold: controls, formats (bidi overrides, zero-width
#: joiners), surrogates, private use, unassigned, and line or paragraph separators.
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


class TokenRefusedError(ValueError):
    """A missing, malformed, expired or forged token; the message says which, for the caller."""


@dataclass(frozen=True)
class Principal:
    """Who is calling; a computer player's token names the one seat it acts for."""

    player_id: str
    kind: str
    #: ``(table id, seat)`` a bot token may act for; None for a person, or a bot with no seat.
    bot_seat: tuple[str, int] | None = None

    @property
    def is_bot(self) -> bool:
        return self.kind == BOT

    def plays_bot_seat(self, table_id: str, seat: int) -> bool:
        """Whether this is the computer player's token for that seat."""
        return self.is_bot and self.bot_seat == (table_id, seat)


def check_player_id(player_id: object) -> str:
    """``player_id`` NFC-normalised, or :class:`TokenRefusedError` saying what is wrong."""
    if not isinstance(player_id, str) or not player_id:
        raise TokenRefusedError("invalid token: the player id is missing")
    normal = unicodedata.normalize("NFC", player_id)
    if len(normal) > MAX_PLAYER_ID_CHARS:
        raise TokenRefusedError(
            f"invalid token: the player id is longer than {MAX_PLAYER_ID_CHARS} characters"
        )
    if normal != normal.strip():
        raise TokenRefusedError("invalid token: the player id starts or ends with white space")
    if any(unicodedata.category(character) in FORBIDDEN_CATEGORIES for character in normal):
        raise TokenRefusedError(
            "invalid token: the player id holds a control or formatting character"
        )
    return normal


class TokenCodec:
    """Issues and verifies tokens with one signing key (rotated by redeploying with a new one)."""

    def __init__(
        self,
        key: str,
        *,
        previous_keys: tuple[str, ...] = (),
        max_lifetime_seconds: float = DEFAULT_MAX_LIFETIME_SECONDS,
    ) -> None:
        if len(key) < 32:
            raise ValueError("the token signing key must be at least 32 characters")
        self._key = key
        self.max_lifetime_seconds = max_lifetime_seconds
        self._verification_keys = (key, *previous_keys)
        # Checking a signature costs more than the rest of a move's handling; a client sends
        # the same token with every call, so verified tokens are remembered until they expire.
        # Each as a plain tuple of strings and numbers, which the garbage collector stops
        # tracking: as principals, every player in the cache would be objects for every full
        # collection of the table service to walk (docs/proving-it.md#settings-the-figures-chose).
        self._verified: OrderedDict[str, tuple[str, str, str, int, float]] = OrderedDict()

    def issue(
        self,
        player_id: str,
        kind: str = PERSON,
        ttl_seconds: float = 3600.0,
        *,
        bot_seat: tuple[str, int] | None = None,
    ) -> str:
        """A signed token for ``player_id`` valid for ``ttl_seconds``; a computer player's
        names the seat it acts for."""
        if kind not in (PERSON, BOT):
            raise ValueError(f"unknown player kind {kind!r}")
        if ttl_seconds > self.max_lifetime_seconds:
            raise ValueError(f"a token lives at most {self.max_lifetime_seconds:g} s")
        now = int(time.time())
        claims: dict[str, object] = {
            "sub": player_id,
            "kind": kind,
            "iss": ISSUER,
            "iat": now,
            "exp": now + int(ttl_seconds),
        }
        if bot_seat is not None:
            claims["seat"] = f"{bot_seat[0]}/{bot_seat[1]}"
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def verify(self, token: str) -> Principal:
        """The principal a valid token names; raises :class:`TokenRefusedError` otherwise."""
        if len(token) > MAX_TOKEN_CHARS:
            raise TokenRefusedError(f"invalid token: longer than {MAX_TOKEN_CHARS} characters")
        remembered = self._verified.get(token)
        if remembered is not None:
            player_id, kind, seat_table, seat, expires_at = remembered
            if time.time() < expires_at:
                bot_seat = (seat_table, seat) if seat_table else None
                return Principal(player_id, kind, bot_seat)
            del self._verified[token]
        principal, expires_at = self._check(token)
        seat_table, seat = principal.bot_seat or ("", -1)
        self._verified[token] = (principal.player_id, principal.kind, seat_table, seat, expires_at)
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
                    options={"require": ["exp", "iat", "sub", "iss"]},
                )
            except jwt.InvalidSignatureError as error:
                last_error = error
                continue
            except jwt.ExpiredSignatureError:
                raise TokenRefusedError("the token has expired") from None
            except jwt.InvalidTokenError as error:
                raise TokenRefusedError(f"invalid token: {error}") from None
            lifetime = float(claims["exp"]) - float(claims["iat"])
            if lifetime > self.max_lifetime_seconds:
                raise TokenRefusedError(
                    f"invalid token: it lives {lifetime:g} s, longer than the "
                    f"{self.max_lifetime_seconds:g} s this service accepts"
                )
            return _principal(claims), float(claims["exp"])
        raise TokenRefusedError(f"invalid token: {last_error}")


def _principal(claims: dict[str, object]) -> Principal:
    player_id, kind = check_player_id(claims.get("sub")), claims.get("kind", PERSON)
    if kind not in (PERSON, BOT):
        raise TokenRefusedError("invalid token: unknown player kind")
    if kind == PERSON and player_id.startswith(RESERVED_PREFIXES):
        raise TokenRefusedError(
            f"invalid token: player ids starting with {' or '.join(RESERVED_PREFIXES)} are "
            "the computer players'"
        )
    seat = claims.get("seat")
    bot_seat = None
    if kind == BOT and isinstance(seat, str):
        table_id, _, number = seat.rpartition("/")
        if not table_id or not number.isdigit():
            raise TokenRefusedError("invalid token: the seat claim is not <table>/<seat>")
        bot_seat = (table_id, int(number))
    return Principal(player_id=player_id, kind=str(kind), bot_seat=bot_seat)


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token from ``authorization: Bearer ...`` metadata, or :class:`TokenRefusedError`.

    Two authorization headers are refused: which one counts would be a guess.
    """
    values = [value for key, value in metadata or () if key.lower() == "authorization"]
    if not values:
        raise TokenRefusedError("this call needs a player token (authorization: Bearer <token>)")
    if len(values) > 1:
        raise TokenRefusedError("send one authorization header, not several")
    value = values[0]
    text = value.decode() if isinstance(value, bytes) else value
    scheme, _, token = text.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    raise TokenRefusedError("the authorization header must be 'Bearer <token>'")
