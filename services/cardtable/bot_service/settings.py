"""The bot service's settings.

Required: ``NATS_URL``, ``TABLE_ADDRESS`` (host:port of the table service's gRPC API) and
``TOKEN_SIGNING_KEY`` (the table service's key: the bot service signs its own bot tokens).
Optional: ``EVENT_PREFIX`` (default ``cardtable``), ``BOT_STRATEGY`` (the strategy or level for
tables that name none or one this build does not know: a level ``easy``, ``normal``, ``hard``
(``bots/levels.py``) or a strategy ``random``, ``rules`` (default) or ``search``),
``GRPC_PORT``, ``METRICS_PORT``, ``LOG_LEVEL`` and the tuning knobs below.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from cardtable.bots.registry import BOT_STRATEGY_NAMES
from cardtable.platform.log_names import LogNames
from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    ServerSettings,
    load,
    read_event_prefix,
)

DEFAULT_STRATEGY = "rules"


@dataclass(frozen=True)
class BotTuning:
    """How many seats one replica plays and how it shares them with the others."""

    #: Seats one replica plays at most; seats offered beyond it wait for one to free up.
    max_seats: int
    #: A claim not renewed for this long expires and another replica may take the seat. It is
    #: the bucket's max age, fixed when the first replica creates the bucket.
    claim_ttl_seconds: float
    #: How often running tables are scanned for computer-played seats nobody plays.
    rescan_seconds: float
    #: Pause before moving for a seat whose person left, so that they can take it back with a
    #: move of their own (capped at a quarter of the table's turn timer).
    reclaim_grace_seconds: float
    #: This replica's name in claims and in ``ActionTaken.actor_id``; unique per process.
    replica_id: str
    #: Seats that may wait for room at a full replica (a bound on memory, not on players:
    #: a seat turned away is offered again by the next scan).
    max_waiting_seats: int = 10_000

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        tuning = cls(
            max_seats=env.integer("BOT_MAX_SEATS", default=1000, minimum=1, maximum=100_000),
            claim_ttl_seconds=env.seconds("BOT_CLAIM_TTL_SECONDS", default=15.0),
            rescan_seconds=env.seconds("BOT_RESCAN_SECONDS", default=5.0),
            reclaim_grace_seconds=env.seconds("BOT_RECLAIM_GRACE_SECONDS", default=1.0),
            replica_id=env.string("BOT_REPLICA_ID", default=unique_replica_id()),
            max_waiting_seats=env.integer(
                "BOT_MAX_WAITING_SEATS", default=10_000, minimum=1, maximum=1_000_000
            ),
        )
        if tuning.claim_ttl_seconds < 1:
            env.problem("BOT_CLAIM_TTL_SECONDS must be at least 1 second")
        if tuning.rescan_seconds <= 0:
            env.problem("BOT_RESCAN_SECONDS must be more than 0")
        if not tuning.replica_id.replace("-", "").replace("_", "").isalnum():
            env.problem("BOT_REPLICA_ID may hold only letters, digits, '-' and '_'")
        return tuning


def unique_replica_id() -> str:
    """Host, process and a random part: two processes never share it, even on one host."""
    host = "".join(ch if ch.isalnum() else "-" for ch in socket.gethostname())[:40]
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class BotServiceSettings:
    server: ServerSettings
    nats: NatsSettings
    table_address: str
    token_signing_key: str
    event_prefix: str
    default_strategy: str
    tuning: BotTuning

    @property
    def names(self) -> LogNames:
        return LogNames.from_prefix(self.event_prefix)

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        key = env.string("TOKEN_SIGNING_KEY", example="the table service's signing key")
        if key and len(key) < 32:
            env.problem("TOKEN_SIGNING_KEY must be at least 32 characters")
        strategy = env.string("BOT_STRATEGY", default=DEFAULT_STRATEGY).lower()
        if strategy not in BOT_STRATEGY_NAMES:
            env.problem(f"BOT_STRATEGY={strategy!r} must be one of {', '.join(BOT_STRATEGY_NAMES)}")
        return cls(
            server=ServerSettings.read(env),
            nats=NatsSettings.read(env),
            table_address=env.address("TABLE_ADDRESS", example="table:50051"),
            token_signing_key=key,
            event_prefix=read_event_prefix(env),
            default_strategy=strategy,
            tuning=BotTuning.read(env),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read every setting, failing fast with all problems at once."""
        return load(env, cls.read)
