"""Every component finds the event log under the same names, whatever the prefix looks like.

A prefix with capitals, ``-`` and ``.`` is where two derivations of the stream name would part:
the table service, the scoring service, the bot service and the operator's tools each read
``EVENT_PREFIX`` through their own settings, and all must land on one stream and one subject.
"""

from __future__ import annotations

import base64

import pytest

from cardtable.bot_service.settings import BotServiceSettings
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchSigner
from cardtable.platform.settings import LogReadingSettings, SettingsError, load
from cardtable.scoring_service.settings import ScoringSettings
from cardtable.table_service.main import TableServiceSettings

ENV = {
    "NATS_URL": "nats://nats:4222",
    "DATABASE_URL": "postgresql://scoring@db/cardtable",
    "RULES_ADDRESS": "rules:50051",
    "TABLE_ADDRESS": "table:50051",
    "TOKEN_SIGNING_KEY": "k" * 32,
    "LOG_SIGNING_KEY": BatchSigner.generate().private_text(),
    "LOG_VERIFYING_KEYS": BatchSigner.generate().public_text(),
    "DEAL_SEALING_KEY": base64.b64encode(bytes(range(32))).decode(),
}


@pytest.mark.parametrize("prefix", ["Acme-EU.live", "cardtable", "a_b-C.d-e"])
def test_every_component_derives_the_same_names(prefix: str) -> None:
    env = {**ENV, "EVENT_PREFIX": prefix}
    names = {
        "table": LogNames.from_prefix(load(env, TableServiceSettings.read).event_prefix),
        "scoring": ScoringSettings.from_env(env).consumer.log,
        "bots": BotServiceSettings.from_env(env).names,
        "tools": LogNames.from_prefix(LogReadingSettings.from_env(env).prefix),
    }
    expected = LogNames(prefix)
    for component, derived in names.items():
        assert (derived.stream, derived.table_subject("t1"), derived.lobby_bucket) == (
            expected.stream,
            expected.table_subject("t1"),
            expected.lobby_bucket,
        ), component
    assert "." not in expected.stream and "-" not in expected.stream


def test_a_prefix_no_stream_can_be_named_from_is_refused_by_every_component() -> None:
    env = {**ENV, "EVENT_PREFIX": "a b"}
    for read in (
        lambda env: load(env, TableServiceSettings.read),
        ScoringSettings.from_env,
        BotServiceSettings.from_env,
        LogReadingSettings.from_env,
    ):
        with pytest.raises(SettingsError, match="EVENT_PREFIX"):
            read(env)
