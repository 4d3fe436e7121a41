"""Per-player quotas and rate limits: what keeps one player from filling a public site.

Each refusal is RESOURCE_EXHAUSTED with a sentence naming the limit, a ``retry-after-ms`` entry
in the trailing metadata where waiting helps, and a count in
``cardtable_table_quota_refusals_total{limit}``. Limits (settings, per player unless said):

* ``MUTATIONS_PER_SECOND`` / ``MUTATION_BURST``: a token bucket on mutating calls (create,
  join, leave, start, rematch, move), per replica;
* ``OPEN_TABLES_PER_PLAYER``: tables created and not yet started, or running with computer
  players alone, counted in the lobby, so across replicas;
* ``SEATS_PER_PLAYER``: seats a person holds at open and running tables, counted in the lobby
  too (a seat handed to a computer player after a leave no longer counts; a rematch, which
  seats a finished game's players again, is not held back);
* ``WATCHES_PER_PLAYER``: WatchTable and WatchTurns streams open at once, per replica
  (computer players' streams are bounded by the bot service's seats instead);
* ``WATCHES_PER_REPLICA`` and ``ANONYMOUS_WATCHES_PER_REPLICA``: all streams, and those of
  watchers without a token, on one replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from cardtable.platform.settings import EnvReader
from cardtable.table_service.errors import TableError


class QuotaExceededError(TableError):
    """A per-player or per-replica limit: RESOURCE_EXHAUSTED, with when to retry."""

    def __init__(self, message: str, limit: str, retry_after_seconds: float | None = None):
        super().__init__(message)
        self.limit = limit
        self.retry_after_seconds = retry_after_seconds


@dataclass(frozen=True)
class QuotaSettings:
    """The limits one deployment applies (module docstring); defaults a public site would use."""

    mutations_per_second: float = 20.0
    mutation_burst: int = 40
    open_tables_per_player: int = 10
    #: More games at once than anyone plays by hand: a player who joins tables only to have
    #: computer players fill them runs into it before the bot service does.
    seats_per_player: int = 10
    watches_per_player: int = 8
    watches_per_replica: int = 2000
    anonymous_watches_per_replica: int = 200
    #: Off: every limit above is lifted (benchmarks compare with and without).
    enabled: bool = True


DEFAULT_QUOTAS = QuotaSettings()
#: Players whose buckets are remembered; the least recently seen are forgotten first (a full
#: bucket is what a forgotten player gets back, so forgetting is never stricter).
MAX_TRACKED_PLAYERS = 100_000


class RateLimiter:
    """One token bucket per player: ``burst`` calls at once, then ``rate`` a second."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate, self._burst, self._clock = rate, burst, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, player_id: str) -> None:
        """Spend one call of ``player_id``'s bucket, or :class:`QuotaExceededError`."""
        now = self._clock()
        tokens, updated = self._buckets.pop(player_id, (float(self._burst), now))
        tokens = min(float(self._burst), tokens + (now - updated) * self._rate)
        if tokens < 1.0:
            self._buckets[player_id] = (tokens, now)
            raise QuotaExceededError(
                f"too many requests: at most {self._rate:g} a second per player "
                f"(bursts of {self._burst}); retry in a moment",
                "mutation_rate",
                (1.0 - tokens) / self._rate,
            )
        self._buckets[player_id] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_TRACKED_PLAYERS:
            self._buckets.popitem(last=False)


class WatchCounter:
    """Open watch streams on this replica, per player and in all."""

    def __init__(self, settings: QuotaSettings) -> None:
        self._settings = settings
        self._by_player: dict[str, int] = {}
        self._total = 0
        self._anonymous = 0

    def hold(self, player_id: str | None) -> Callable[[], None]:
        """Take one stream for ``player_id`` (None: a watcher without a token), or
        :class:`QuotaExceededError`; returns what gives it back."""
        settings = self._settings
        if settings.enabled:
            if self._total >= settings.watches_per_replica:
                raise QuotaExceededError(
                    f"this server has {settings.watches_per_replica} watch streams open, its "
                    "limit; retry later or on another replica",
                    "watches_per_replica",
                    5.0,
                )
            if player_id is None and self._anonymous >= settings.anonymous_watches_per_replica:
                raise QuotaExceededError(
                    f"this server has {settings.anonymous_watches_per_replica} watch streams "
                    "without a player token open, its limit; watch with a token",
                    "anonymous_watches",
                    5.0,
                )
            held = self._by_player.get(player_id or "", 0)
            if player_id is not None and held >= settings.watches_per_player:
                raise QuotaExceededError(
                    f"you have {held} watch streams open, the most one player may; close one",
                    "watches_per_player",
                )
        self._total += 1
        if player_id is None:
            self._anonymous += 1
        else:
            self._by_player[player_id] = self._by_player.get(player_id, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._total -= 1
            if player_id is None:
                self._anonymous -= 1
                return
            remaining = self._by_player[player_id] - 1
            if remaining:
                self._by_player[player_id] = remaining
            else:
                del self._by_player[player_id]

        return release


class PlayerTurns:
    """One player's quota-counted commands (creates, joins) on this replica, one at a time.

    The lobby counts a table or a seat once its command is stored, so a player's concurrent
    commands would all pass the same count; taken in turn, each sees the one before it. Other
    players, and every move, are never held up.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def turn(self, player_id: str) -> AsyncIterator[None]:
        lock, waiting = self._locks.get(player_id, (asyncio.Lock(), 0))
        self._locks[player_id] = (lock, waiting + 1)
        try:
            async with lock:
                yield
        finally:
            lock, waiting = self._locks[player_id]
            if waiting == 1:
                del self._locks[player_id]
            else:
                self._locks[player_id] = (lock, waiting - 1)

    @property
    def players(self) -> int:
        """Players with a command in flight (none once every command has ended)."""
        return len(self._locks)


def check_open_tables(created_by: str, open_tables: int, settings: QuotaSettings) -> None:
    """Refuse a new table to a player who already has the most open ones allowed."""
    if settings.enabled and open_tables >= settings.open_tables_per_player:
        raise QuotaExceededError(
            f"you have {open_tables} open tables that have not started or that computer "
            "players alone play, the most one player may; start, join or finish one first",
            "open_tables_per_player",
        )


def check_seats(held: int, settings: QuotaSettings) -> None:
    """Refuse one more seat to a person who holds the most seats allowed."""
    if settings.enabled and held >= settings.seats_per_player:
        raise QuotaExceededError(
            f"you hold {held} seats at open and running tables, the most one player may; "
            "finish or leave a game first",
            "seats_per_player",
        )


#: Each integer quota's setting and its bounds.
_INTEGER_SETTINGS = (
    ("mutation_burst", "MUTATION_BURST", 1, 100_000),
    ("open_tables_per_player", "OPEN_TABLES_PER_PLAYER", 1, 100_000),
    ("seats_per_player", "SEATS_PER_PLAYER", 1, 100_000),
    ("watches_per_player", "WATCHES_PER_PLAYER", 1, 100_000),
    ("watches_per_replica", "WATCHES_PER_REPLICA", 1, 1_000_000),
    ("anonymous_watches_per_replica", "ANONYMOUS_WATCHES_PER_REPLICA", 0, 1_000_000),
)


def read_quotas(env: EnvReader) -> QuotaSettings:
    """The quota settings of the module docstring, and ``QUOTAS_ENABLED`` (default true)."""
    integers = {
        name: env.integer(
            variable, default=getattr(DEFAULT_QUOTAS, name), minimum=low, maximum=high
        )
        for name, variable, low, high in _INTEGER_SETTINGS
    }
    rate = env.integer(
        "MUTATIONS_PER_SECOND",
        default=int(DEFAULT_QUOTAS.mutations_per_second),
        minimum=1,
        maximum=100_000,
    )
    enabled = env.choice("QUOTAS_ENABLED", choices=("TRUE", "FALSE"), default="TRUE")
    return QuotaSettings(mutations_per_second=float(rate), enabled=enabled == "TRUE", **integers)
