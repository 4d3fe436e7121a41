"""Seat claims between replicas on real NATS, and the service's settings and names."""

from __future__ import annotations

import asyncio
import json

import nats.errors
import pytest

from cardtable.bot_service.claims import ClaimsUnavailableError, SeatClaims
from cardtable.bot_service.settings import BotServiceSettings
from cardtable.bot_service.table_player import command_id_for, rng_for
from cardtable.bots.strategy import RandomStrategy, is_offered
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.platform.settings import SettingsError, load
from cardtable_tools.servers.provisioning import NatsNamespace

TABLE = "6f1c2b1e-0000-4000-8000-000000000001"


async def _replica(
    connection: NatsConnection, namespace: NatsNamespace, name: str, ttl: float = 1.0
) -> SeatClaims:
    claims = SeatClaims(
        connection.jetstream, LogNames.from_prefix(namespace.prefix).claims_bucket, name, ttl
    )
    await claims.open()
    return claims


async def test_one_replica_gets_a_seat_and_the_other_takes_it_after_release(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    first = await _replica(nats_connection, nats_namespace, "first")
    second = await _replica(nats_connection, nats_namespace, "second")
    results = await asyncio.gather(first.claim(TABLE, 1), second.claim(TABLE, 1))
    assert sorted(results) == [False, True]
    winner, loser = (first, second) if results[0] else (second, first)
    assert winner.lease_valid(TABLE, 1) and not loser.lease_valid(TABLE, 1)
    assert await winner.renew(TABLE, 1)
    assert not await loser.claim(TABLE, 1)
    await winner.release(TABLE, 1)
    assert await loser.claim(TABLE, 1)
    assert loser.held() == [(TABLE, 1)] and winner.held() == []


async def test_the_claims_of_a_silent_replica_expire_and_it_learns_it_lost_them(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    silent = await _replica(nats_connection, nats_namespace, "silent")
    other = await _replica(nats_connection, nats_namespace, "other")
    assert await silent.claim(TABLE, 2)
    await asyncio.sleep(1.6)  # no renewal for longer than the TTL
    assert not silent.lease_valid(TABLE, 2)
    assert await other.claim(TABLE, 2)
    assert not await silent.renew(TABLE, 2)
    assert silent.held() == []


async def test_a_restarted_replica_with_the_same_name_adopts_its_claim(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    before = await _replica(nats_connection, nats_namespace, "pod-0", ttl=5.0)
    assert await before.claim(TABLE, 3)
    after = await _replica(nats_connection, nats_namespace, "pod-0", ttl=5.0)
    assert await after.claim(TABLE, 3)
    stranger = await _replica(nats_connection, nats_namespace, "pod-1", ttl=5.0)
    assert not await stranger.claim(TABLE, 3)


async def test_a_renewal_whose_reply_was_lost_keeps_the_claim(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    claims = await _replica(nats_connection, nats_namespace, "pod-0", ttl=5.0)
    assert await claims.claim(TABLE, 4)
    # The renewal reached the bucket, but its reply (the new revision) never came back.
    bucket = await nats_connection.jetstream.key_value(
        LogNames.from_prefix(nats_namespace.prefix).claims_bucket
    )
    await bucket.put(SeatClaims.key(TABLE, 4), json.dumps({"replica": "pod-0"}).encode())
    assert await claims.renew(TABLE, 4)
    assert claims.holds(TABLE, 4) and claims.lease_valid(TABLE, 4)
    stranger = await _replica(nats_connection, nats_namespace, "pod-1", ttl=5.0)
    assert not await stranger.claim(TABLE, 4)


async def test_an_adopted_claim_whose_renewal_fails_is_not_kept(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    before = await _replica(nats_connection, nats_namespace, "pod-0", ttl=5.0)
    assert await before.claim(TABLE, 5)
    after = await _replica(nats_connection, nats_namespace, "pod-0", ttl=5.0)

    async def no_answer(*args: object, **kwargs: object) -> int:
        raise nats.errors.TimeoutError

    after._bucket.update = no_answer  # type: ignore[method-assign]
    with pytest.raises(ClaimsUnavailableError):
        await after.claim(TABLE, 5)
    assert not after.holds(TABLE, 5)  # so the next scan offers it again


async def test_a_claim_is_due_a_renewal_interval_after_its_last_confirmation_until_renewed(
    nats_connection: NatsConnection, nats_namespace: NatsNamespace
) -> None:
    clock = [100.0]
    claims = SeatClaims(
        nats_connection.jetstream,
        LogNames.from_prefix(nats_namespace.prefix).claims_bucket,
        "pod-0",
        15.0,
        now=lambda: clock[0],
    )
    await claims.open()
    assert await claims.claim(TABLE, 6)
    clock[0] += claims.renew_every_seconds - 0.1
    assert claims.due() == []
    clock[0] += 0.1
    assert claims.due() == [(TABLE, 6)]

    async def no_answer(*args: object, **kwargs: object) -> int:
        raise nats.errors.TimeoutError

    answering = claims._bucket.update
    claims._bucket.update = no_answer  # type: ignore[method-assign]
    with pytest.raises(ClaimsUnavailableError):
        await claims.renew(TABLE, 6)
    assert claims.due() == [(TABLE, 6)]  # still due: the next look tries again
    claims._bucket.update = answering  # type: ignore[method-assign]
    assert await claims.renew(TABLE, 6)
    assert claims.due() == []


def test_settings_fail_fast_naming_every_problem() -> None:
    with pytest.raises(SettingsError) as caught:
        load({"BOT_STRATEGY": "genius", "TOKEN_SIGNING_KEY": "short"}, BotServiceSettings.read)
    problems = "\n".join(caught.value.problems)
    for name in ("NATS_URL", "TABLE_ADDRESS", "TOKEN_SIGNING_KEY", "BOT_STRATEGY"):
        assert name in problems
    settings = load(
        {
            "NATS_URL": "nats://127.0.0.1:4222",
            "TABLE_ADDRESS": "table:50051",
            "TOKEN_SIGNING_KEY": "k" * 32,
        },
        BotServiceSettings.read,
    )
    assert settings.default_strategy == "rules"
    assert settings.names.claims_bucket == "cardtable_BOT_SEATS"
    leveled = load(
        {
            "NATS_URL": "nats://127.0.0.1:4222",
            "TABLE_ADDRESS": "table:50051",
            "TOKEN_SIGNING_KEY": "k" * 32,
            "BOT_STRATEGY": "Normal",
        },
        BotServiceSettings.read,
    )
    assert leveled.default_strategy == "normal"  # a level names the default as well


def test_deciders_of_one_turn_choose_the_same_legal_move() -> None:
    view = {"legal_actions": ["play 2C", "play 3C", "play QS"], "choose_cards": None}
    command_id = command_id_for(TABLE, 0, 17)
    choices = {RandomStrategy().choose(view, rng_for(command_id)) for _ in range(5)}
    assert len(choices) == 1 and is_offered(choices.pop(), view)
    passing = {
        "legal_actions": [],
        "choose_cards": {"verb": "pass", "cards": ["2C", "3D", "4H", "QS"], "count": 3.0},
    }
    assert is_offered("pass 2C 3D QS", passing)
    assert not is_offered("pass 2C 2C QS", passing)
    assert not is_offered("pass 2C 3D", passing)
    assert not is_offered("", passing) and not is_offered("", view)
    assert not is_offered("play 2C", view | {"legal_actions": ["play 3C"]})
