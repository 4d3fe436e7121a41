"""What a table's settings and a request may hold: bounds a public card site needs.

Each refusal is a sentence naming the bound (INVALID_ARGUMENT), given before anything is
appended: an oversized or nonsensical request never reaches the event store, whose streams
keep everything for ever.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cardtable.bots.names import BOT_STRATEGY_NAMES
from cardtable.table_service.errors import BadRequestError
from cardtable.table_service.rated import RATED_MIN_TURN_TIMER_MS
from cardtable_api.events.v1 import events_pb2

#: The turn timer is off (0) or within these bounds: shorter is no time for a person.
MIN_TURN_TIMER_MS = 5_000
MAX_TURN_TIMER_MS = 600_000
#: A computer player's seat waits this long for the bot service on a table without a timer.
BOT_FALLBACK_MS = 10_000
#: How long an open table waits for people before computer players fill it.
MAX_FILL_WAIT_MS = 600_000
#: A table option's value (options are the game's own: flags and small numbers).
MAX_OPTION_VALUE_CHARS = 32
#: Far above any real command (a CreateTable with every option is under 300 bytes), far below
#: the NATS maximum payload (1 MiB) that an event carrying it must fit in.
MAX_REQUEST_BYTES = 4096


@dataclass(frozen=True)
class TableLimits:
    """The bounds one deployment applies (``MIN_TURN_TIMER_MS``: tests of timeouts go lower)."""

    min_turn_timer_ms: int = MIN_TURN_TIMER_MS
    #: On a table without a turn timer, how long a computer player's seat may wait for the bot
    #: service before this service moves for it (``BOT_FALLBACK_MS``).
    bot_fallback_ms: int = BOT_FALLBACK_MS
    #: The shortest turn timer of a rated game (``RATED_MIN_TURN_TIMER_MS``, rated.py).
    rated_min_turn_timer_ms: int = RATED_MIN_TURN_TIMER_MS


#: The bounds a deployment has unless its settings say otherwise.
DEFAULT_LIMITS = TableLimits()


def check_request_size(request: Message) -> None:
    """Refuse a request too large to be a real command."""
    size = request.ByteSize()
    if size > MAX_REQUEST_BYTES:
        raise BadRequestError(
            f"the request is {size:,} bytes; a command is at most {MAX_REQUEST_BYTES:,}"
        )


def check_settings(
    settings: events_pb2.TableSettings, limits: TableLimits = DEFAULT_LIMITS
) -> None:
    """Refuse settings outside the bounds above, naming the one at fault."""
    timer = settings.turn_timer_ms
    if timer and not limits.min_turn_timer_ms <= timer <= MAX_TURN_TIMER_MS:
        raise BadRequestError(
            f"turn_timer_ms is 0 (no timer) or {limits.min_turn_timer_ms:,} to "
            f"{MAX_TURN_TIMER_MS:,} ms, not {timer:,}"
        )
    if settings.fill_wait_ms > MAX_FILL_WAIT_MS:
        raise BadRequestError(
            f"fill_wait_ms is at most {MAX_FILL_WAIT_MS:,} ms, not {settings.fill_wait_ms:,}"
        )
    if settings.bot_strategy not in BOT_STRATEGY_NAMES:
        shown = settings.bot_strategy[:40]
        names = ", ".join(BOT_STRATEGY_NAMES)
        raise BadRequestError(f"bot_strategy is one of {names}, not {shown!r}")


def check_option_values(options: dict[str, str]) -> None:
    """Option values are short: the rules service checks what they mean."""
    for name, value in options.items():
        if len(value) > MAX_OPTION_VALUE_CHARS:
            raise BadRequestError(
                f"the value of option {name} is at most {MAX_OPTION_VALUE_CHARS} characters"
            )
