"""Rated or unrated, end to end: the lobby shows it, the scoring service shows it, and only a
rated game moves anyone's rating.

A table's creator once had four people's game played out by 1 ms turn timers, every seat
handed to computer players, and the game moved ratings. Timers under 5 s are refused now; a
5 s timer, or a game option other than the standard one, is allowed and gives an unrated game.
Players play over gRPC through the real table service (rules service in-process over gRPC),
and the live consumer projects the log; a rebuild from the log gives the same rows.
"""

from __future__ import annotations

import random
import uuid

import asyncpg
import grpc
import pytest

from cardtable.engine import rating
from cardtable.platform.grpc_server import start_server
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.main import scoring_service
from cardtable.scoring_service.rebuild import compare_projections, rebuild
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_api.events.v1 import events_pb2
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.scoring_service.conftest import SCHEMA, running_consumer, wait_for_position
from tests.table_service.harness import (
    RATED_SETTINGS,
    Cluster,
    Player,
    log_security,
    play_to_the_end,
    running_rules,
    running_table_service,
)

REBUILT = "scoring_rebuilt"
#: The shortest timer a table may have, and too short for a rated game.
FIVE_SECONDS = events_pb2.TableSettings(turn_timer_ms=5_000, fill_with_bots=False)


async def seated(cluster: Cluster, table_id: str, names: list[str]) -> dict[int, Player]:
    players = {seat: cluster.player(name) for seat, name in enumerate(names)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    return players


async def lobby(host: Player, status: str) -> dict[str, bool]:
    """Each listed table's ``rated``, by table id."""
    reply = await host.stub.ListTables(table_pb2.ListTablesRequest(status=status))
    return {summary.table_id: summary.rated for summary in reply.tables}


async def test_only_a_table_within_the_rated_bounds_moves_ratings(
    nats_url: str,
    nats_connection: NatsConnection,
    nats_namespace: NatsNamespace,
    projection_pool: asyncpg.Pool,
    fresh_database_url: str,
) -> None:
    whist_players = ["ann", "bob", "cy"]
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        host = cluster.player("host")
        rated_id = await host.create("whist", 3, {}, RATED_SETTINGS)
        short_id = await host.create("whist", 3, {}, FIVE_SECONDS)
        variant_id = await host.create("hearts", 4, {"quick": "true"}, RATED_SETTINGS)
        assert await lobby(host, "open") == {rated_id: True, short_id: False, variant_id: False}

        # the same three play the rated game, then the one with a 5 s timer
        players = await seated(cluster, rated_id, whist_players)
        await play_to_the_end(rated_id, players, random.Random("rated"))
        players = await seated(cluster, short_id, whist_players)
        await play_to_the_end(short_id, players, random.Random("short"))
        variant_players = await seated(cluster, variant_id, ["dee", "eve", "fay", "gus"])
        await play_to_the_end(variant_id, variant_players, random.Random("variant"))
        assert await lobby(host, "finished") == {
            rated_id: True,
            short_id: False,
            variant_id: False,
        }

        # a rematch decides from its own settings, the same way
        rematches = {}
        for table_id in (rated_id, short_id):
            reply = await players[0].stub.Rematch(
                table_pb2.RematchRequest(command_id=str(uuid.uuid4()), table_id=table_id),
                metadata=players[0].metadata,
            )
            rematches[table_id] = reply.table_id
        assert await lobby(host, "running") == {
            rematches[rated_id]: True,
            rematches[short_id]: False,
        }
        last = (await nats_connection.jetstream.stream_info(cluster.names.stream)).state.last_seq

    names = LogNames.from_prefix(nats_namespace.prefix)
    settings = ConsumerSettings(
        log=names,
        consumer_name="scoring",
        schema=SCHEMA,
        batch_size=256,
        ack_wait_seconds=2.0,
        verifier=log_security(nats_namespace.prefix).verifier,
    )
    async with running_consumer(nats_connection, projection_pool, settings):
        await wait_for_position(projection_pool, names.stream, last)
    server = await start_server([scoring_service(projection_pool, names)], port=0, host="127.0.0.1")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            await _the_scoring_service_shows_it(
                scoring_pb2_grpc.ScoringServiceStub(channel),
                rated_id,
                short_id,
                variant_id,
                whist_players,
            )
    finally:
        await server.stop(None)
    games = await projection_pool.fetch("SELECT table_id, rated FROM games")
    assert {row["table_id"]: row["rated"] for row in games} == {
        rated_id: True,
        short_id: False,
        variant_id: False,
        rematches[rated_id]: True,
        rematches[short_id]: False,
    }

    await rebuild(
        fresh_database_url,
        nats_connection.jetstream,
        names,
        schema=REBUILT,
        verifier=settings.verifier,
    )
    async with projection_pool.acquire() as connection:
        comparison = await compare_projections(connection, SCHEMA, REBUILT)
    assert [c.table for c in comparison if not c.identical] == []


async def _the_scoring_service_shows_it(
    scoring: scoring_pb2_grpc.ScoringServiceAsyncStub,
    rated_id: str,
    short_id: str,
    variant_id: str,
    whist_players: list[str],
) -> None:
    rated = await scoring.GetGameResult(scoring_pb2.GetGameResultRequest(table_id=rated_id))
    expected = rating.rating_changes("whist", list(rated.totals), [rating.INITIAL_RATING] * 3)
    assert rated.rated and rated.finished
    assert list(rated.rating_changes) == pytest.approx(expected)
    for table_id in (short_id, variant_id):
        unrated = await scoring.GetGameResult(scoring_pb2.GetGameResultRequest(table_id=table_id))
        assert unrated.finished and not unrated.rated
        assert sorted(unrated.places)[0] == 1 and len(unrated.totals) == len(unrated.player_ids)
        assert list(unrated.rating_changes) == []

    # each whist player's rating moved once, by the rated game alone
    board = await scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game="whist"))
    assert {entry.player_id: (entry.rating, entry.games) for entry in board.entries} == {
        name: (pytest.approx(rating.INITIAL_RATING + change), 1)
        for name, change in zip(whist_players, expected, strict=True)
    }
    hearts = await scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game="hearts"))
    assert list(hearts.entries) == []
    ann = await scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest(player_id="ann"))
    [whist] = ann.ratings
    assert [change.table_id for change in whist.history] == [rated_id]
    dee = await scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest(player_id="dee"))
    assert list(dee.ratings) == []

    # ann's games, newest first: the rematches (running), then the unrated and the rated game
    games = await scoring.ListPlayerGames(scoring_pb2.ListPlayerGamesRequest(player_id="ann"))
    finished = [game for game in games.games if game.finished]
    assert [(game.table_id, game.rated) for game in finished] == [
        (short_id, False),
        (rated_id, True),
    ]
    assert finished[0].place and finished[0].rating_change == 0
    assert finished[1].rating_change == pytest.approx(expected[0])
