"""Games of each kind played through the table service, projected by the scoring consumer.

The log here is the real one: scripted clients play over gRPC, the table service appends,
and the live consumer projects the stream. Deal scores, totals and places are compared with
the game record the table service serves, and the rating changes are computed in the test
from docs/rules.md's formulas (equal starting ratings of 1500). The tables are created rated: a
timer long enough for a person, and each game's standard options.
"""

from __future__ import annotations

import asyncio
import json
import random

import asyncpg
import pytest

from cardtable.cli.main import main as cli
from cardtable.engine import rating
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.scoring_service.conftest import SCHEMA, running_consumer, wait_for_position
from tests.table_service.harness import (
    RATED_SETTINGS,
    log_security,
    play_to_the_end,
    running_rules,
    running_table_service,
)

GAMES = [
    ("hearts", 4, {}),
    ("whist", 3, {}),
    ("358", 3, {}),
    ("belote", 4, {}),
]
#: Hearts passes left, right, across, then not at all, deal after deal (docs/rules.md).
HEARTS_PASSING = ("left", "right", "across", None)


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_a_game_played_through_the_table_service_is_scored_and_rated(
    nats_url: str,
    nats_connection: NatsConnection,
    nats_namespace: NatsNamespace,
    projection_pool: asyncpg.Pool,
    game: str,
    seats: int,
    options: dict[str, str],
) -> None:
    names = [f"{game}-player-{seat}" for seat in range(seats)]
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        host = cluster.player("host")
        table_id = await host.create(game, seats, options, RATED_SETTINGS)
        players = {seat: cluster.player(name) for seat, name in enumerate(names)}
        for seat, player in players.items():
            await player.join(table_id, seat)
        await play_to_the_end(table_id, players, random.Random(f"scored-{game}"))
        record = json.loads(
            (
                await host.stub.GetGameRecord(table_pb2.GetGameRecordRequest(table_id=table_id))
            ).record_json
        )
        last = await cluster.subject_sequence(table_id)
    settings = ConsumerSettings(
        log=LogNames.from_prefix(nats_namespace.prefix),
        consumer_name="scoring",
        schema=SCHEMA,
        batch_size=256,
        ack_wait_seconds=2.0,
        verifier=log_security(nats_namespace.prefix).verifier,
    )
    async with running_consumer(nats_connection, projection_pool, settings):
        await wait_for_position(projection_pool, settings.log.stream, last)

    rows = await projection_pool.fetch(
        "SELECT deal_number, array_agg(score ORDER BY seat) AS scores, "
        "array_agg(total ORDER BY seat) AS totals FROM deal_seats WHERE table_id = $1 "
        "GROUP BY deal_number ORDER BY deal_number",
        table_id,
    )
    played = [deal for deal in record["deals"] if deal["scores"] is not None]
    assert [list(row["scores"]) for row in rows] == [deal["scores"] for deal in played]
    if game == "hearts":  # the direction is public though the passed cards are sealed
        passing = await projection_pool.fetch(
            "SELECT passing FROM deals WHERE table_id = $1 ORDER BY deal_number", table_id
        )
        assert [row["passing"] for row in passing] == [
            HEARTS_PASSING[deal % 4] for deal in range(len(passing))
        ]
    assert [list(row["totals"]) for row in rows] == [deal["totals"] for deal in played]
    finals = await projection_pool.fetch(
        "SELECT player_id, total, place FROM game_players WHERE table_id = $1 ORDER BY seat",
        table_id,
    )
    totals, places = record["result"]["totals"], record["result"]["places"]
    assert [tuple(row) for row in finals] == list(zip(names, totals, places, strict=True))
    expected = rating.rating_changes(game, totals, [rating.INITIAL_RATING] * seats)
    changes = await projection_pool.fetch(
        "SELECT change FROM rating_changes WHERE table_id = $1 ORDER BY seat", table_id
    )
    assert [row["change"] for row in changes] == pytest.approx(expected)
    rated = await projection_pool.fetch(
        "SELECT player_id, rating FROM ratings WHERE game = $1 ORDER BY player_id", game
    )
    assert {row["player_id"]: row["rating"] for row in rated} == {
        name: pytest.approx(rating.INITIAL_RATING + change)
        for name, change in zip(names, expected, strict=True)
    }


async def test_rebuild_command_matches_the_live_projection(
    nats_url: str,
    nats_connection: NatsConnection,
    nats_namespace: NatsNamespace,
    projection_pool: asyncpg.Pool,
    fresh_database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        for game, seats, options in [GAMES[1], GAMES[3]]:
            host = cluster.player("host")
            table_id = await host.create(game, seats, options, RATED_SETTINGS)
            players = {seat: cluster.player(f"r{seat}") for seat in range(seats)}
            for seat, player in players.items():
                await player.join(table_id, seat)
            await play_to_the_end(table_id, players, random.Random(game))
        last = (await nats_connection.jetstream.stream_info(cluster.names.stream)).state.last_seq
    settings = ConsumerSettings(
        log=LogNames.from_prefix(nats_namespace.prefix),
        consumer_name="scoring",
        schema=SCHEMA,
        batch_size=256,
        ack_wait_seconds=2.0,
        verifier=log_security(nats_namespace.prefix).verifier,
    )
    async with running_consumer(nats_connection, projection_pool, settings):
        await wait_for_position(projection_pool, settings.log.stream, last)
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    monkeypatch.setenv("EVENT_PREFIX", nats_namespace.prefix)
    monkeypatch.delenv("LOG_VERIFYING_KEYS", raising=False)
    monkeypatch.delenv("TABLE_ADDRESS", raising=False)
    refused = await asyncio.to_thread(cli, ["rebuild", "--schema", "rebuilt"])
    assert refused == 2  # without the public keys a rebuild would take forgeries in
    monkeypatch.setenv(
        "LOG_VERIFYING_KEYS", log_security(nats_namespace.prefix).signer.public_text()
    )
    code = await asyncio.to_thread(
        cli, ["rebuild", "--schema", "rebuilt", "--compare-with", SCHEMA]
    )
    assert code == 0
    assert f"rebuild into rebuilt: {last:,}/{last:,} messages in" in capsys.readouterr().err
