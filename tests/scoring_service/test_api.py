"""The ScoringService over a real gRPC channel, the server in-process on a free port."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardtable.engine import rating
from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.platform.log_signing import BatchSigner
from cardtable.platform.logging import JsonLogHandler, remove_logging
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.main import SERVICE_NAME, run, scoring_service
from cardtable.scoring_service.page_tokens import encode_page_token
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_api.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.scoring_service.conftest import running_consumer, wait_for_position
from tests.scoring_service.event_log import TableLog, bot, interleave, people, publish

PLAYERS = [*people("ann", "bob", "cy", "dee", "eve"), bot("robo")]


@pytest.fixture
async def played(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> list[TableLog]:
    """Four quick Hearts games among six players, a Whist game and one still running."""
    logs = []
    for seed in range(4):
        seated = [PLAYERS[(seed + offset) % len(PLAYERS)] for offset in range(4)]
        logs.append(TableLog("hearts", seated, seed=200 + seed, options={"quick": "true"}).play())
    logs.append(TableLog("whist", PLAYERS[:3], seed=210).play())
    running = TableLog("358", PLAYERS[3:], seed=211)
    running.open_and_start()
    running.play_deals(2)
    running.play_steps(3)  # the third deal is dealt and being played
    logs.append(running)
    sequences = await publish(nats_connection.jetstream, consumer_settings.log, interleave(logs))
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, consumer_settings.log.stream, sequences[-1])
    return logs


@pytest.fixture
async def scoring(
    projection_pool: asyncpg.Pool, consumer_settings: ConsumerSettings
) -> AsyncIterator[scoring_pb2_grpc.ScoringServiceStub]:
    server = await start_server(
        [scoring_service(projection_pool, consumer_settings.log)], port=0, host="127.0.0.1"
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)
    await server.stop(None)


async def status_of(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return caught.value.code()


async def test_the_leaderboard_is_paged_in_rating_order(
    scoring: scoring_pb2_grpc.ScoringServiceStub, played: list[TableLog]
) -> None:
    entries: list[scoring_pb2.LeaderboardEntry] = []
    token = ""
    pages = 0
    while True:
        page = await scoring.GetLeaderboard(
            scoring_pb2.GetLeaderboardRequest(game="hearts", page_size=4, page_token=token)
        )
        entries += page.entries
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages == 2
    assert sorted({e.player_id for e in entries}) == sorted(p.player_id for p in PLAYERS)
    ratings = [e.rating for e in entries]
    assert ratings == sorted(ratings, reverse=True)
    assert sum(r - 1500 for r in ratings) == pytest.approx(0)
    for entry in entries:  # competition ranking: one more than the number rated higher
        assert entry.rank == 1 + sum(other.rating > entry.rating for other in entries)
    robo = next(e for e in entries if e.player_id == "robo")
    assert robo.bot and not next(e for e in entries if e.player_id == "ann").bot
    assert next(e for e in entries if e.player_id == "ann").display_name == "Ann"
    assert sum(e.games for e in entries) == 16


async def test_a_players_ratings_and_history(
    scoring: scoring_pb2_grpc.ScoringServiceStub, played: list[TableLog]
) -> None:
    answer = await scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest(player_id="ann"))
    by_game = {rating.game: rating for rating in answer.ratings}
    assert set(by_game) == {"hearts", "whist"}
    hearts = by_game["hearts"]
    assert len(hearts.history) == hearts.games
    assert hearts.history[0].after == pytest.approx(hearts.rating)  # newest first
    for newer, older in zip(hearts.history, hearts.history[1:], strict=False):
        assert newer.before == pytest.approx(older.after)
    assert hearts.history[-1].before == 1500
    assert {change.table_id for change in hearts.history} <= {log.table_id for log in played}

    one = await scoring.GetPlayerRatings(
        scoring_pb2.GetPlayerRatingsRequest(player_id="ann", game="hearts", history_limit=1)
    )
    assert [r.game for r in one.ratings] == ["hearts"]
    assert list(one.ratings[0].history) == [hearts.history[0]]


async def test_a_games_result_deal_by_deal(
    scoring: scoring_pb2_grpc.ScoringServiceStub, played: list[TableLog]
) -> None:
    whist = played[4]
    result = await scoring.GetGameResult(scoring_pb2.GetGameResultRequest(table_id=whist.table_id))
    assert result.finished and result.game == "whist"
    assert list(result.player_ids) == ["ann", "bob", "cy"]
    assert [list(deal.scores) for deal in result.deals] == [
        list(scores) for scores in whist.game.deal_scores
    ]
    assert list(result.deals[-1].totals) == list(result.totals) == whist.game.totals
    assert list(result.places) == list(whist.game.places() or ())
    assert result.deals[0].contract.startswith("bids ")
    assert list(result.rating_changes) == rating.place_formula_changes(whist.game.totals)
    assert result.finished_at.ToDatetime() > result.started_at.ToDatetime()

    running = played[5]
    result = await scoring.GetGameResult(
        scoring_pb2.GetGameResultRequest(table_id=running.table_id)
    )
    assert not result.finished
    assert len(result.deals) == 3 and not result.deals[-1].scores  # the third is being played
    assert list(result.totals) == [] and list(result.disconnected) == [False] * 3


async def test_a_players_recent_games(
    scoring: scoring_pb2_grpc.ScoringServiceStub, played: list[TableLog]
) -> None:
    games: list[scoring_pb2.GameSummary] = []
    token = ""
    pages = 0
    while pages == 0 or token:
        page = await scoring.ListPlayerGames(
            scoring_pb2.ListPlayerGamesRequest(player_id="dee", page_size=2, page_token=token)
        )
        games += page.games
        token = page.next_page_token
        pages += 1
    dee_tables = [log.table_id for log in played if "dee" in [p.player_id for p in log.players]]
    assert (pages, len(games)) == (3, 5)
    assert sorted(g.table_id for g in games) == sorted(dee_tables)
    start_order = [  # the order in which the games started in the log
        batch.table_id
        for batch in interleave(played)
        if any(event.HasField("game_started") for event in batch.events)
    ]
    assert [g.table_id for g in games] == [t for t in reversed(start_order) if t in dee_tables]
    running = next(g for g in games if g.table_id == played[5].table_id)
    assert not running.finished and running.place == 0 and not running.HasField("finished_at")
    assert all(g.place >= 1 and g.HasField("finished_at") for g in games if g.finished)


async def test_the_projection_status(
    scoring: scoring_pb2_grpc.ScoringServiceStub,
    played: list[TableLog],
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    status = await scoring.GetProjectionStatus(scoring_pb2.GetProjectionStatusRequest())
    assert status.stream_sequence == sum(len(log.batches) for log in played)
    assert status.dead_letters == 0


async def test_bad_requests_and_unknown_ids(
    scoring: scoring_pb2_grpc.ScoringServiceStub, played: list[TableLog]
) -> None:
    invalid, missing = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND
    page = await scoring.GetLeaderboard(
        scoring_pb2.GetLeaderboardRequest(game="hearts", page_size=1)
    )
    calls = {
        "no game": (scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest()), invalid),
        "unknown game": (
            scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game="poker")),
            invalid,
        ),
        "garbage token": (
            scoring.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(game="hearts", page_token="%%%")
            ),
            invalid,
        ),
        "another game's token": (
            scoring.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(game="whist", page_token=page.next_page_token)
            ),
            invalid,
        ),
        "a leaderboard token for games": (
            scoring.ListPlayerGames(
                scoring_pb2.ListPlayerGamesRequest(player_id="ann", page_token=page.next_page_token)
            ),
            invalid,
        ),
        "no player": (scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest()), invalid),
        "unknown player": (
            scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest(player_id="zed")),
            missing,
        ),
        "games of nobody": (scoring.ListPlayerGames(scoring_pb2.ListPlayerGamesRequest()), invalid),
        "games of a stranger": (
            scoring.ListPlayerGames(scoring_pb2.ListPlayerGamesRequest(player_id="zed")),
            missing,
        ),
        "a token with a rating that is not a number": (
            scoring.GetLeaderboard(
                scoring_pb2.GetLeaderboardRequest(
                    game="hearts",
                    page_token=encode_page_token(
                        "leaderboard", game="hearts", rating=float("nan"), player="ann"
                    ),
                )
            ),
            invalid,
        ),
        "a token with a sequence past bigint": (
            scoring.ListPlayerGames(
                scoring_pb2.ListPlayerGamesRequest(
                    player_id="ann",
                    page_token=encode_page_token("games", player="ann", sequence=2**63, seat=0),
                )
            ),
            invalid,
        ),
        "a token with a seat past integer": (
            scoring.ListPlayerGames(
                scoring_pb2.ListPlayerGamesRequest(
                    player_id="ann",
                    page_token=encode_page_token("games", player="ann", sequence=1, seat=2**40),
                )
            ),
            invalid,
        ),
        "a NUL in a player id": (
            scoring.GetPlayerRatings(scoring_pb2.GetPlayerRatingsRequest(player_id="a\x00n")),
            invalid,
        ),
        "a NUL in a table id": (
            scoring.GetGameResult(scoring_pb2.GetGameResultRequest(table_id="t\x001")),
            invalid,
        ),
        "no table": (scoring.GetGameResult(scoring_pb2.GetGameResultRequest()), invalid),
        "unknown table": (
            scoring.GetGameResult(scoring_pb2.GetGameResultRequest(table_id="nope")),
            missing,
        ),
    }
    codes = {name: await status_of(call) for name, (call, _) in calls.items()}
    assert codes == {name: code for name, (_, code) in calls.items()}


async def test_the_service_from_its_composition_root(
    nats_connection: NatsConnection,
    nats_namespace: NatsNamespace,
    nats_url: str,
    fresh_database_url: str,
    consumer_settings: ConsumerSettings,
) -> None:
    log = TableLog("belote", people("ann", "bob", "cy", "dee"), seed=300).play()
    signer = BatchSigner.generate()
    sequences = await publish(
        nats_connection.jetstream, consumer_settings.log, log.batches, signer=signer
    )
    env = {
        "LOG_VERIFYING_KEYS": signer.public_text(),
        "NATS_URL": nats_url,
        "DATABASE_URL": fresh_database_url,
        "EVENT_PREFIX": nats_namespace.prefix,
        "GRPC_PORT": "0",
        "METRICS_PORT": "0",
        "LOG_LEVEL": "WARNING",
    }
    stop = asyncio.Event()
    started: list[RunningServer] = []
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    service = asyncio.create_task(run(env, stop_requested=stop, on_started=started.append))
    try:
        while not started:
            assert not service.done(), service.exception()
            await asyncio.sleep(0.05)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{started[0].port}") as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME)
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            stub = scoring_pb2_grpc.ScoringServiceStub(channel)
            for _ in range(200):
                status = await stub.GetProjectionStatus(scoring_pb2.GetProjectionStatusRequest())
                if status.stream_sequence == sequences[-1]:
                    break
                await asyncio.sleep(0.05)
            result = await stub.GetGameResult(
                scoring_pb2.GetGameResultRequest(table_id=log.table_id)
            )
        assert result.finished and list(result.totals) == log.game.totals
    finally:
        stop.set()
        await asyncio.wait_for(service, 30)
        for handler in list(root.handlers):  # the service's JSON log handler: put logging back
            if handler not in handlers and isinstance(handler, JsonLogHandler):
                remove_logging(handler)
        root.setLevel(level)
