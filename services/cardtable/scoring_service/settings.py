"""The scoring service's settings and the names of the event log it reads.

The stream and subject names come from ``EVENT_PREFIX`` as every component derives them
(platform/log_names.py). Tests pass their own prefix so that each test reads its own stream.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchVerifier, LogKeyError, parse_public_keys
from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    PostgresSettings,
    ServerSettings,
    load,
    read_event_prefix,
)

#: A NATS name token: no dots, wildcards or spaces.
NAME_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")
#: A PostgreSQL schema we create: unquoted, lower-case, at most 63 bytes.
SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


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

    log: LogNames
    consumer_name: str
    schema: str
    # Messages fetched, projected and committed together; larger batches catch up faster.
    batch_size: int
    # How long JetStream waits for an ack before redelivering; the consumer renews it while a
    # batch waits for PostgreSQL, so it only matters after a crash.
    ack_wait_seconds: float
    # After a lone message, how long to wait for more before projecting: a few milliseconds of
    # lag buy one transaction for several moves instead of one each when tables are busy. The
    # default keeps the lag well inside its target while saving the scoring service and
    # PostgreSQL CPU per move (docs/proving-it.md#settings-the-figures-chose).
    linger_seconds: float = 0.0
    #: The table service's public keys (``LOG_VERIFYING_KEYS``): a batch not signed by one of
    #: them, or out of its table's chain, is dead-lettered (platform/log_signing.py). None only
    #: in tests that project unsigned logs they wrote themselves.
    verifier: BatchVerifier | None = None

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``EVENT_PREFIX``, ``SCORING_CONSUMER``, ``SCORING_SCHEMA``,
        ``LOG_VERIFYING_KEYS`` and the tuning knobs."""
        prefix = read_event_prefix(env)
        consumer_name = env.string("SCORING_CONSUMER", default="scoring")
        schema = env.string("SCORING_SCHEMA", default="scoring")
        if not NAME_TOKEN.match(consumer_name):
            env.problem(
                f"SCORING_CONSUMER={consumer_name!r} may hold only letters, digits, _ and -"
            )
        if not SCHEMA_NAME.match(schema):
            env.problem(f"SCORING_SCHEMA={schema!r} must be lower-case letters, digits and _")
        ack_wait_seconds = env.seconds("SCORING_ACK_WAIT_SECONDS", default=30.0)
        if ack_wait_seconds < 1:
            env.problem(f"SCORING_ACK_WAIT_SECONDS={ack_wait_seconds:g} is below 1 second")
        keys = env.secret(
            "LOG_VERIFYING_KEYS",
            required=True,
            example="the table service's public key, base64 (GetLogKeys, docs/security.md)",
        )
        verifier = None
        try:
            verifier = BatchVerifier(parse_public_keys(keys)) if keys else None
        except LogKeyError as error:
            env.problem(f"LOG_VERIFYING_KEYS: {error}")
        return cls(
            verifier=verifier,
            log=LogNames.from_prefix(prefix),
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
