"""``cardtable token NAME``: a player token for development and tests.

Without it a newcomer had to write Python to call the table service, and a token signed with
any key but the running stack's is refused as UNAUTHENTICATED. It signs with
``TOKEN_SIGNING_KEY`` from the environment (``source .run/env`` gives the one ``make run``
generated) and checks the token as the table service would before printing it, so a name the
service would refuse is refused here, with the service's sentence.
"""

from __future__ import annotations

import argparse
import os
import sys

from cardtable.platform.tokens import BOT, PERSON, TokenCodec, TokenRefusedError

MIN_KEY_CHARS = 32
NO_KEY = (
    "set TOKEN_SIGNING_KEY to the table service's key: for the stack `make run` started, "
    "`source .run/env` sets it"
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``token`` to the ``cardtable`` command line."""
    parser = commands.add_parser(
        "token", help="print a player token signed with TOKEN_SIGNING_KEY (development, tests)"
    )
    parser.add_argument("name", help="the player id the token names (its sub)")
    parser.add_argument("--kind", choices=(PERSON, BOT), default=PERSON)
    parser.add_argument(
        "--ttl", type=float, default=3600.0, metavar="SECONDS", help="lifetime (at most a day)"
    )
    parser.add_argument(
        "--seat",
        metavar="TABLE/SEAT",
        help="with --kind bot: the one seat the computer player acts for, e.g. t-1a2b/3",
    )
    parser.set_defaults(handler=cmd_token)


def _seat(text: str) -> tuple[str, int]:
    table_id, _, number = text.rpartition("/")
    if not table_id or not number.isdigit():
        raise ValueError(f"--seat takes TABLE/SEAT, like t-1a2b/3, not {text!r}")
    return table_id, int(number)


def issue_token(name: str, kind: str, ttl_seconds: float, seat: str | None, key: str) -> str:
    """The token, or ``ValueError`` with a sentence saying why none can be issued."""
    if len(key) < MIN_KEY_CHARS:
        raise ValueError(
            f"TOKEN_SIGNING_KEY is {len(key)} characters; the table service needs at least "
            f"{MIN_KEY_CHARS}"
        )
    if kind == BOT and seat is None:
        # the table service lets a bot token act only for the seat it names (Principal.bot_seat)
        raise ValueError("a bot token names the seat it acts for: add --seat TABLE/SEAT")
    if kind == PERSON and seat is not None:
        raise ValueError("--seat is for bot tokens; a person's token acts for the person's seats")
    codec = TokenCodec(key)
    token = codec.issue(name, kind, ttl_seconds, bot_seat=_seat(seat) if seat is not None else None)
    try:
        codec.verify(token)
    except TokenRefusedError as refused:
        raise ValueError(f"the table service would refuse this token: {refused}") from None
    return token


def cmd_token(args: argparse.Namespace) -> int:
    """Print the token on stdout (for ``TOKEN=$(cardtable token alice)``), or say why not."""
    key = os.environ.get("TOKEN_SIGNING_KEY", "")
    if not key:
        print(f"cardtable token: {NO_KEY}", file=sys.stderr)
        return 2
    try:
        print(issue_token(args.name, args.kind, args.ttl, args.seat, key))
    except ValueError as problem:
        print(f"cardtable token: {problem}", file=sys.stderr)
        return 2
    return 0
