"""The table service's own settings: the lobby's retention and the pipelines' linger."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardtable.platform.settings import SettingsError, load
from cardtable.table_service.log_security import LogSecurity
from cardtable.table_service.main import TableServiceSettings
from cardtable.table_service.quotas import QuotaSettings

KEYS = LogSecurity.generate()
REQUIRED = {
    "NATS_URL": "nats://127.0.0.1:4222",
    "RULES_ADDRESS": "127.0.0.1:50051",
    "TOKEN_SIGNING_KEY": "k" * 32,
    **KEYS.environment(),
}


def test_the_log_keys_are_required_and_read_from_files_too(tmp_path: Path) -> None:
    without = dict(REQUIRED)
    del without["LOG_SIGNING_KEY"], without["DEAL_SEALING_KEY"]
    with pytest.raises(SettingsError) as caught:
        load(without, TableServiceSettings.read)
    assert "LOG_SIGNING_KEY (or LOG_SIGNING_KEY_FILE) is required" in str(caught.value)
    assert "DEAL_SEALING_KEY (or DEAL_SEALING_KEY_FILE) is required" in str(caught.value)
    signing, sealing = tmp_path / "signing", tmp_path / "sealing"
    signing.write_text(KEYS.signer.private_text() + "\n")
    sealing.write_text(KEYS.sealing.current_text() + "\n")
    retired, previous = LogSecurity.generate(), LogSecurity.generate()
    files = {
        **without,
        "LOG_SIGNING_KEY_FILE": str(signing),
        "DEAL_SEALING_KEY_FILE": str(sealing),
        "LOG_RETIRED_PUBLIC_KEYS": retired.signer.public_text(),
        "DEAL_SEALING_PREVIOUS_KEYS": previous.sealing.current_text(),
    }
    security = load(files, TableServiceSettings.read).log_security
    assert security.signer.key_id == KEYS.signer.key_id
    assert security.sealing.current_id == KEYS.sealing.current_id
    assert set(security.verifier.public_keys) == {KEYS.signer.key_id, retired.signer.key_id}
    assert set(security.sealing.key_ids) == {
        KEYS.sealing.current_id,
        previous.sealing.current_id,
    }


def test_unreadable_log_keys_are_refused_with_a_sentence(tmp_path: Path) -> None:
    for name, value, complaint in [
        ("LOG_SIGNING_KEY", "not base64!", "neither PEM nor base64"),
        ("DEAL_SEALING_KEY", "c2hvcnQ=", "must be 32 bytes"),
        ("LOG_RETIRED_PUBLIC_KEYS", "c2hvcnQ=", "must be 32 bytes"),
    ]:
        with pytest.raises(SettingsError, match=complaint):
            load({**REQUIRED, name: value}, TableServiceSettings.read)
    unreadable = {**REQUIRED, "DEAL_SEALING_KEY_FILE": str(tmp_path / "none")}
    del unreadable["DEAL_SEALING_KEY"]
    with pytest.raises(SettingsError, match="cannot be read"):
        load(unreadable, TableServiceSettings.read)
    with pytest.raises(SettingsError, match="not both"):
        load({**unreadable, "DEAL_SEALING_KEY": "x"}, TableServiceSettings.read)


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


def test_quotas_are_on_by_default_and_each_can_be_set() -> None:
    assert load(REQUIRED, TableServiceSettings.read).quotas == QuotaSettings()
    env = {
        **REQUIRED,
        "MUTATIONS_PER_SECOND": "5",
        "MUTATION_BURST": "7",
        "OPEN_TABLES_PER_PLAYER": "2",
        "SEATS_PER_PLAYER": "4",
        "WATCHES_PER_PLAYER": "3",
        "WATCHES_PER_REPLICA": "100",
        "ANONYMOUS_WATCHES_PER_REPLICA": "0",
        "QUOTAS_ENABLED": "false",
    }
    assert load(env, TableServiceSettings.read).quotas == QuotaSettings(
        mutations_per_second=5,
        mutation_burst=7,
        open_tables_per_player=2,
        seats_per_player=4,
        watches_per_player=3,
        watches_per_replica=100,
        anonymous_watches_per_replica=0,
        enabled=False,
    )
    with pytest.raises(SettingsError, match="OPEN_TABLES_PER_PLAYER"):
        load({**REQUIRED, "OPEN_TABLES_PER_PLAYER": "0"}, TableServiceSettings.read)
