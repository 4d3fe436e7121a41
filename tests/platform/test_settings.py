"""Settings fail fast at start-up, naming every variable that is missing or malformed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

import pytest

from cardtable.platform.settings import (
    EnvReader,
    NatsSettings,
    PostgresSettings,
    RulesClientSettings,
    ServerSettings,
    SettingsError,
    load,
)


@dataclass(frozen=True)
class TableServiceSettings:
    """What a service composes from the shared groups."""

    server: ServerSettings
    nats: NatsSettings
    postgres: PostgresSettings
    rules: RulesClientSettings

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        return cls(
            server=ServerSettings.read(env),
            nats=NatsSettings.read(env),
            postgres=PostgresSettings.read(env),
            rules=RulesClientSettings.read(env),
        )


COMPLETE = {
    "NATS_URL": "nats://nats:4222",
    "DATABASE_URL": "postgresql://table:secret@db:5432/cardtable",
    "RULES_ADDRESS": "rules:50051",
}


def test_a_complete_environment_gives_typed_settings_with_defaults() -> None:
    settings = load(COMPLETE, TableServiceSettings.read)

    assert settings.server == ServerSettings(
        log_level="INFO",
        grpc_port=50051,
        metrics_port=9464,
        listen_host="",
        max_receive_message_bytes=4 * 1024 * 1024,
        shutdown_grace_seconds=10.0,
        shutdown_drain_seconds=0.0,
    )
    assert settings.nats.url == "nats://nats:4222"
    assert settings.postgres.url == COMPLETE["DATABASE_URL"]
    assert (settings.postgres.pool_min_size, settings.postgres.pool_max_size) == (1, 10)
    assert settings.rules.address == "rules:50051"


def test_explicit_values_override_defaults() -> None:
    env = {
        "LOG_LEVEL": "debug",
        "GRPC_PORT": "0",
        "METRICS_PORT": "9100",
        "GRPC_MAX_RECEIVE_MESSAGE_BYTES": "1048576",
        "SHUTDOWN_GRACE_SECONDS": "2.5",
    }
    settings = ServerSettings.from_env(env)

    assert settings.log_level == "DEBUG"
    assert settings.grpc_port == 0
    assert settings.metrics_port == 9100
    assert settings.max_receive_message_bytes == 1048576
    assert settings.shutdown_grace_seconds == 2.5


def test_a_missing_required_variable_is_named_with_an_example() -> None:
    with pytest.raises(SettingsError) as raised:
        NatsSettings.from_env({})

    assert raised.value.problems == (
        "NATS_URL is required but not set (e.g. nats://127.0.0.1:4222)",
    )


def test_a_blank_value_counts_as_missing() -> None:
    with pytest.raises(SettingsError, match="RULES_ADDRESS is required"):
        RulesClientSettings.from_env({"RULES_ADDRESS": "  "})


def test_every_problem_is_reported_at_once() -> None:
    env = {
        "GRPC_PORT": "grpc",
        "METRICS_PORT": "70000",
        "LOG_LEVEL": "loud",
        "SHUTDOWN_GRACE_SECONDS": "-1",
        "DATABASE_URL": "mysql://db/cardtable",
        "RULES_ADDRESS": "rules",
    }
    with pytest.raises(SettingsError) as raised:
        load(env, TableServiceSettings.read)

    message = str(raised.value)
    assert message.startswith("invalid configuration:\n")
    for variable in (
        "GRPC_PORT='grpc'",
        "METRICS_PORT='70000'",
        "LOG_LEVEL='LOUD' must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
        "SHUTDOWN_GRACE_SECONDS='-1'",
        "NATS_URL is required",
        "DATABASE_URL='mysql://db/cardtable' must be a postgres/postgresql URL",
        "RULES_ADDRESS='rules' must be host:port",
    ):
        assert variable in message
    assert len(raised.value.problems) == 7


def test_a_password_never_reaches_the_error_message() -> None:
    with pytest.raises(SettingsError) as raised:
        PostgresSettings.from_env({"DATABASE_URL": "mysql://table:hunter2@db/cardtable"})

    assert "hunter2" not in str(raised.value)
    assert "table:***@db" in str(raised.value)


def test_inconsistent_pool_bounds_are_refused() -> None:
    env = {**COMPLETE, "DATABASE_POOL_MIN": "20", "DATABASE_POOL_MAX": "5"}

    with pytest.raises(SettingsError, match="DATABASE_POOL_MIN=20 exceeds DATABASE_POOL_MAX=5"):
        PostgresSettings.from_env(env)


@pytest.mark.parametrize("value", ["abc", "1.5", "0", "999999999999"])
def test_out_of_range_or_non_integer_sizes_are_refused(value: str) -> None:
    with pytest.raises(SettingsError, match="GRPC_MAX_RECEIVE_MESSAGE_BYTES"):
        ServerSettings.from_env({"GRPC_MAX_RECEIVE_MESSAGE_BYTES": value})


def test_a_url_with_a_bad_port_is_refused() -> None:
    with pytest.raises(SettingsError, match="NATS_URL='nats://nats:port' has an invalid port"):
        NatsSettings.from_env({"NATS_URL": "nats://nats:port"})
