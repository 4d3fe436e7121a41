"""Whole games through the live consumer: deal scores, totals, places and ratings in Postgres.

Each scenario writes a log with ``TableLog`` (the engine plays; nothing here knows a rule),
publishes it to the test's stream and lets the real consumer project it. The expected ratings
are computed here from the final totals with the rating module, or written out from docs/rules.md's
worked examples.
"""

from __future__ import annotations

import asyncpg
import pytest

from cardtable.engine import rating
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.settings import ConsumerSettings
from tests.scoring_service.conftest import running_consumer, wait_for_position
from tests.scoring_service.event_log import TableLog, bot, interleave, people, publish

GAME_SETUPS = [
    ("whist", ["ann", "bob", "cy", "dee"], {}),
    ("358", ["ann", "bob", "cy"], {}),
    ("belote", ["ann", "bob", "cy", "dee"], {}),
    ("hearts", ["ann", "bob", "cy", "dee"], {}),
]


async def project(
    nats: NatsConnection,
    pool: asyncpg.Pool,
    settings: ConsumerSettings,
    *logs: TableLog,
) -> None:
    """Publish the tables' logs (interleaved) and wait until the consumer has projected them."""
    sequences = await publish(nats.jetstream, settings.log, interleave(list(logs)))
    async with running_consumer(nats, pool, settings):
        await wait_for_position(pool, settings.log.stream, sequences[-1])


async def deal_rows(pool: asyncpg.Pool, table_id: str) -> list[tuple[int, list[int], list[int]]]:
    records = await pool.fetch(
        "SELECT deal_number, array_agg(score ORDER BY seat) AS scores, "
        "array_agg(total ORDER BY seat) AS totals FROM deal_seats WHERE table_id = $1 "
        "GROUP BY deal_number ORDER BY deal_number",
        table_id,
    )
    return [(r["deal_number"], list(r["scores"]), list(r["totals"])) for r in records]


async def rating_changes(pool: asyncpg.Pool, table_id: str) -> list[float]:
    records = await pool.fetch(
        "SELECT change FROM rating_changes WHERE table_id = $1 ORDER BY seat", table_id
    )
    return [record["change"] for record in records]


async def ratings(pool: asyncpg.Pool, game: str) -> dict[str, tuple[float, int]]:
    records = await pool.fetch("SELECT player_id, rating, games FROM ratings WHERE game = $1", game)
    return {r["player_id"]: (r["rating"], r["games"]) for r in records}


@pytest.mark.parametrize(("game", "names", "options"), GAME_SETUPS, ids=lambda v: str(v))
async def test_a_whole_game_ends_with_its_scores_places_and_ratings(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    game: str,
    names: list[str],
    options: dict[str, str],
) -> None:
    log = TableLog(game, people(*names), seed=11, options=options).play()
    state = log.game

    await project(nats_connection, projection_pool, consumer_settings, log)

    running_totals = []
    total = [0] * len(names)
    for scores in state.deal_scores:
        total = [before + score for before, score in zip(total, scores, strict=True)]
        running_totals.append(total)
    assert await deal_rows(projection_pool, log.table_id) == [
        (number, list(scores), totals)
        for number, (scores, totals) in enumerate(
            zip(state.deal_scores, running_totals, strict=True), start=1
        )
    ]
    game_row = await projection_pool.fetchrow(
        "SELECT game, status, deal_number, finished_sequence IS NOT NULL AS done FROM games "
        "WHERE table_id = $1",
        log.table_id,
    )
    assert dict(game_row) == {
        "game": game,
        "status": "finished",
        "deal_number": len(state.deal_scores),
        "done": True,
    }
    seats = await projection_pool.fetch(
        "SELECT player_id, total, place FROM game_players WHERE table_id = $1 ORDER BY seat",
        log.table_id,
    )
    assert [tuple(record) for record in seats] == list(
        zip(names, state.totals, state.places() or (), strict=True)
    )
    expected = rating.rating_changes(game, state.totals, [rating.INITIAL_RATING] * len(names))
    assert await rating_changes(projection_pool, log.table_id) == pytest.approx(expected)
    assert await ratings(projection_pool, game) == {
        name: (pytest.approx(1500 + change), 1)
        for name, change in zip(names, expected, strict=True)
    }


async def test_deals_are_described_by_their_contract_bids_or_trump(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    logs = [TableLog(game, people(*names), seed=5).play() for game, names, _ in GAME_SETUPS]

    await project(nats_connection, projection_pool, consumer_settings, *logs)

    contracts = {
        record["game"]: record["contracts"]
        for record in await projection_pool.fetch(
            "SELECT g.game, array_agg(d.contract ORDER BY d.deal_number) AS contracts "
            "FROM deals d JOIN games g USING (table_id) GROUP BY g.game"
        )
    }
    assert contracts["whist"][0].startswith("bids ")
    assert any(", no trump" in text for text in contracts["whist"])  # the deals of 8
    assert all(text.startswith("contract ") for text in contracts["358"])
    assert all(text.startswith(("trump ", "thrown in")) for text in contracts["belote"])
    assert set(contracts["hearts"][:4]) == {"pass left", "pass right", "pass across", "no pass"}


async def test_worked_examples_of_rules_md(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    whist = TableLog("whist", people("a", "b", "c", "d"), seed=1)
    whist.open_and_start()
    whist.finish_with([120, 90, 75, 60])
    hearts = TableLog("hearts", people("a", "b", "c", "d"), seed=2)
    hearts.open_and_start()
    hearts.finish_with([102, 64, 64, 89])
    three_five_eight = TableLog("358", people("a", "b", "c"), seed=3)
    three_five_eight.open_and_start()
    three_five_eight.finish_with([9, -2, -7])
    belote = TableLog("belote", people("a", "b", "c", "d"), seed=4)
    belote.open_and_start()
    belote.finish_with([320, 512, 320, 512])

    await project(
        nats_connection, projection_pool, consumer_settings, whist, hearts, three_five_eight, belote
    )

    # "Whist rating, 4 players, totals 120, 90, 75, 60: +20, 0, -8, -20."
    assert await rating_changes(projection_pool, whist.table_id) == pytest.approx([20, 0, -8, -20])
    # "Hearts final totals 102, 64, 64, 89 (equal ratings): B and C +20 each, D -15, A -25."
    assert await rating_changes(projection_pool, hearts.table_id) == pytest.approx(
        [-25, 20, 20, -15]
    )
    # 3-5-8 is Whist's formula with n = 3: +15, -15, between 12 + 24 × (-2 - 9) / 16.
    assert await rating_changes(projection_pool, three_five_eight.table_id) == pytest.approx(
        [15, -4.5, -15]
    )
    # Belote at equal ratings: winners +20 each, losers -20 each.
    assert await rating_changes(projection_pool, belote.table_id) == pytest.approx(
        [-20, 20, -20, 20]
    )


async def test_level_adjustment_uses_the_ratings_before_each_game(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    players = people("a", "b", "c", "d")
    first = TableLog("hearts", players, seed=21, options={"quick": "true"}).play()
    second = TableLog("hearts", players[1:] + players[:1], seed=22, options={"quick": "true"})
    second.play()
    third = TableLog("hearts", players[2:] + players[:2], seed=23, options={"quick": "true"})
    third.play()

    # One after the other, so each game starts from the ratings the previous one left.
    sequences = [
        await publish(nats_connection.jetstream, consumer_settings.log, log.batches)
        for log in (first, second, third)
    ]
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, consumer_settings.log.stream, sequences[-1][-1])

    current = {player.player_id: rating.INITIAL_RATING for player in players}
    for log in (first, second, third):
        ids = [player.player_id for player in log.players]
        before = [current[player_id] for player_id in ids]
        expected = rating.level_adjusted_changes(
            rating.hearts_base_changes(log.game.totals), before
        )
        assert await rating_changes(projection_pool, log.table_id) == pytest.approx(expected)
        for player_id, change in zip(ids, expected, strict=True):
            current[player_id] += change
    assert await ratings(projection_pool, "hearts") == {
        player_id: (pytest.approx(value), 3) for player_id, value in current.items()
    }


async def test_leavers_lose_the_deduction_and_their_bots_get_nothing(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    log = TableLog("whist", [*people("ann", "bob", "cy"), bot("robo")], seed=31)
    log.open_and_start()
    log.play_deals(6)
    left_at = log.game.progress()
    log.leave(1, bot_id="stand-in-1")  # bob leaves for good
    log.play_deals(3)
    log.time_out(2, bot_id="stand-in-2")  # cy loses the seat to timeouts...
    log.play_deals(2)
    log.reclaim(2)  # ...and takes it back before the end: not disconnected
    log.play_to_end()

    await project(nats_connection, projection_pool, consumer_settings, log)

    totals = log.game.totals
    base = rating.place_formula_changes(totals)
    expected = [base[0], base[1] - rating.leaver_deduction(4, left_at), base[2], base[3]]
    assert left_at == pytest.approx(6 / 24)
    assert await rating_changes(projection_pool, log.table_id) == pytest.approx(expected)
    deductions = await projection_pool.fetch(
        "SELECT player_id, leaver_deduction FROM rating_changes WHERE table_id = $1 ORDER BY seat",
        log.table_id,
    )
    assert [tuple(r) for r in deductions] == [
        ("ann", 0.0),
        ("bob", pytest.approx(5.0)),
        ("cy", 0.0),
        ("robo", 0.0),  # seated from the start: rated like a person
    ]
    rated = set(await ratings(projection_pool, "whist"))
    assert rated == {"ann", "bob", "cy", "robo"}  # the stand-ins are not rated
    seats_now = await projection_pool.fetch(
        "SELECT player_id, kind FROM seats WHERE table_id = $1 ORDER BY seat", log.table_id
    )
    assert [tuple(r) for r in seats_now] == [
        ("ann", "person"),
        ("stand-in-1", "bot"),
        ("cy", "person"),
        ("robo", "bot"),
    ]


async def test_a_seat_lost_to_timeouts_and_never_reclaimed_costs_the_deduction(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    log = TableLog("whist", [*people("ann", "bob", "cy"), bot("robo")], seed=37)
    log.open_and_start()
    log.play_deals(5)
    lost_at = log.game.progress()
    log.time_out(0, bot_id="stand-in-0")  # ann's third timeout in a row: a bot to the end
    log.play_to_end()

    await project(nats_connection, projection_pool, consumer_settings, log)

    base = rating.place_formula_changes(log.game.totals)
    assert lost_at == pytest.approx(5 / 24)
    deduction = 5 * 4 * 5 / 24  # 5 x n x the share of deals completed when the seat was lost
    expected = [base[0] - deduction, base[1], base[2], base[3]]
    assert await rating_changes(projection_pool, log.table_id) == pytest.approx(expected)
    deductions = await projection_pool.fetch(
        "SELECT player_id, leaver_deduction FROM rating_changes WHERE table_id = $1 ORDER BY seat",
        log.table_id,
    )
    assert [tuple(r) for r in deductions] == [
        ("ann", pytest.approx(deduction)),
        ("bob", 0.0),
        ("cy", 0.0),
        ("robo", 0.0),
    ]


async def test_whist_ends_when_everyone_else_has_left(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    log = TableLog("whist", [*people("ann", "bob", "cy"), bot("robo")], seed=41)
    log.open_and_start()
    log.play_deals(4)
    log.leave(1)
    log.play_deals(2)
    log.time_out(2)
    log.end_everyone_else_left()

    await project(nats_connection, projection_pool, consumer_settings, log)

    # "the remaining person gets +5n and each player who left -15"; the bot seated from the
    # start gets nothing, and no leaver deduction applies on top.
    assert await rating_changes(projection_pool, log.table_id) == [20.0, -15.0, -15.0, 0.0]
    game = await projection_pool.fetchrow(
        "SELECT status, ended_early, end_reason FROM games WHERE table_id = $1", log.table_id
    )
    assert tuple(game) == ("finished", True, "everyone_else_left")


async def test_players_and_tables_not_yet_finished(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
    log_names: LogNames,
) -> None:
    running = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=51)
    running.open_and_start()
    running.play_deals(2)
    waiting = TableLog("whist", people("eve", "fay", "gus"), seed=52)
    waiting.open()

    await project(nats_connection, projection_pool, consumer_settings, running, waiting)

    statuses = dict(await projection_pool.fetch("SELECT table_id, status FROM games"))
    assert statuses == {running.table_id: "running", waiting.table_id: "open"}
    assert await projection_pool.fetchval("SELECT count(*) FROM ratings") == 0
    names = dict(await projection_pool.fetch("SELECT player_id, display_name FROM players"))
    assert names["eve"] == "Eve"
    assert len(names) == 7
