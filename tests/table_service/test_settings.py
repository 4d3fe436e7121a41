"""The table service's own settings: the lobby's retention and the pipelines' linger."""

from __future__ import annotations

import pytest

from cardtable.platform.settings import SettingsError, load
from cardtable.table_service.main import TableServiceSettings

REQUIRED = {
    "NATS_URL": "nats://127.0.0.1:4222",
    "RULES_ADDRESS": "127.0.0.1:50051",
    "TOKEN_SIGNING_KEY": "k" * 32,
}


def test_defaults_keep_finished_tables_a_day_and_linger_a_millisecond() -> None:
    settings = load(REQUIRED, TableServiceSettings.read)
    assert settings.lobby_finished_retention_seconds == 86_400
    assert settings.pipeline_linger_seconds == 0.001


def test_both_can_be_set_and_turned_off() -> None:
    env = {**REQUIRED, "LOBBY_FINISHED_RETENTION_SECONDS": "0", "PIPELINE_LINGER_MS": "0"}
    settings = load(env, TableServiceSettings.read)
    assert (settings.lobby_finished_retention_seconds, settings.pipeline_linger_seconds) == (0, 0)
    env = {**REQUIRED, "LOBBY_FINISHED_RETENTION_SECONDS": "3600", "PIPELINE_LINGER_MS": "5"}
    settings = load(env, TableServiceSettings.read)
    assert settings.lobby_finished_retention_seconds == 3600
    assert settings.pipeline_linger_seconds == 0.005


def test_nonsense_is_refused_naming_each_variable() -> None:
    env = {**REQUIRED, "LOBBY_FINISHED_RETENTION_SECONDS": "-1", "PIPELINE_LINGER_MS": "1000"}
    with pytest.raises(SettingsError) as refused:
        load(env, TableServiceSettings.read)
    assert [problem.split("=")[0] for problem in refused.value.problems] == [
        "LOBBY_FINISHED_RETENTION_SECONDS",
        "PIPELINE_LINGER_MS",
    ]
