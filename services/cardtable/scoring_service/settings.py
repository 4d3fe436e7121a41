"""The scoring service's settings and the names of the event log it reads.

The stream and subject names follow docs/events.md: one stream ``{PREFIX}_EVENTS`` holding one
subject per table, ``{prefix}.table.{table_id}``. ``EVENT_PREFIX`` is the prefix as written in
the stream name (``CARDTABLE`` by default); subjects use it lower-cased. Tests pass their own
prefix so that each test reads its own stream.

    >>> names = EventLogNames.from_prefix("CARDTABLE")
    >>> names.stream, names.table_subject("42"), names.table_id_of("cardtable.table.42")
    ('CARDTABLE_EVENTS', 'cardtable.table.42', '42')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    PostgresSettings,
    ServerSettings,
    load,
)

#: A NATS name token: no dots, wildcards or spaces.
NAME_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")
#: A PostgreSQL schema we create: unquoted, lower-case, at most 63 bytes.
SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class EventLogNames:
    """Where the table events live in JetStream."""

    stream: str
    subject_prefix: str

    @classmethod
    def from_prefix(cls, prefix: str) -> Self:
        """``{PREFIX}_EVENTS`` and ``{prefix}.table.*``, as docs/events.md names them."""
        return cls(stream=f"{prefix}_EVENTS", subject_prefix=prefix.lower())

    @property
    def tables_subject(self) -> str:
        """Every table's subject (table ids hold no dots)."""
        return f"{self.subject_prefix}.table.*"

    def table_subject(self, table_id: str) -> str:
        """The subject of one table's events."""
        return f"{self.subject_prefix}.table.{table_id}"

    def table_id_of(self, subject: str) -> str | None:
        """The table id a subject names, or ``None`` when it is not a table subject."""
        head = f"{self.subject_prefix}.table."
        if not subject.startswith(head):
            return None
        table_id = subject[len(head) :]
        return table_id if table_id and "." not in table_id else None


def check_schema_name(schema: str) -> str:
    """``schema`` if it is safe to write unquoted into SQL, else ``ValueError``."""
    if not SCHEMA_NAME.match(schema):
        raise ValueError(
            f"schema name {schema!r} must be lower-case letters, digits and _ (at most 63)"
        )
    return schema


@dataclass(frozen=True)
class ConsumerSettings:
    """How the projection reads the log."""

    log: EventLogNames
    consumer_name: str
    schema: str
    # Messages fetched, projected and committed together; larger batches catch up faster.
    batch_size: int
    # How long JetStream waits for an ack before redelivering; the consumer renews it while a
    # batch waits for PostgreSQL, so it only matters after a crash.
    ack_wait_seconds: float
    # After a lone message, how long to wait for more before projecting: a few milliseconds of
    # lag buy one transaction for several moves instead of one each when tables are busy. The
    # default, 50 ms, keeps the lag's p99 near 100 ms at 1,000 moves/s and costs the scoring
    # service and PostgreSQL a fifth less CPU per move than 20 ms (docs/proving-it.md).
    linger_seconds: float = 0.0

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``EVENT_PREFIX``, ``SCORING_CONSUMER``, ``SCORING_SCHEMA`` and the tuning knobs."""
        prefix = env.string("EVENT_PREFIX", default="cardtable")
        consumer_name = env.string("SCORING_CONSUMER", default="scoring")
        schema = env.string("SCORING_SCHEMA", default="scoring")
        for variable, value in (("EVENT_PREFIX", prefix), ("SCORING_CONSUMER", consumer_name)):
            if not NAME_TOKEN.match(value):
                env.problem(f"{variable}={value!r} may hold only letters, digits, _ and -")
        if not SCHEMA_NAME.match(schema):
            env.problem(f"SCORING_SCHEMA={schema!r} must be lower-case letters, digits and _")
        ack_wait_seconds = env.seconds("SCORING_ACK_WAIT_SECONDS", default=30.0)
        if ack_wait_seconds < 1:
            env.problem(f"SCORING_ACK_WAIT_SECONDS={ack_wait_seconds:g} is below 1 second")
        return cls(
            log=EventLogNames.from_prefix(prefix),
            consumer_name=consumer_name,
            schema=schema,
            batch_size=env.integer("SCORING_BATCH_SIZE", default=256, minimum=1, maximum=10_000),
            ack_wait_seconds=ack_wait_seconds,
            linger_seconds=env.integer("SCORING_LINGER_MS", default=50, minimum=0, maximum=1000)
            / 1000,
        )


@dataclass(frozen=True)
class ScoringSettings:
    """Everything the scoring service reads from the environment."""

    server: ServerSettings
    nats: NatsSettings
    postgres: PostgresSettings
    consumer: ConsumerSettings

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read every group, so that one error message names every bad variable."""
        return cls(
            server=ServerSettings.read(env),
            nats=NatsSettings.read(env),
            postgres=PostgresSettings.read(env),
            consumer=ConsumerSettings.read(env),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read the settings, raising one ``SettingsError`` listing every problem."""
        return load(env, cls.read)
