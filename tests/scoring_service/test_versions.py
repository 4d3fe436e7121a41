"""Event versions: old batches stay readable after the messages gained fields, and batches from
a newer writer with fields (or whole events) this reader does not know are projected all the
same, the unknown parts ignored (docs/events.md, "Versions").
"""

from __future__ import annotations

import asyncpg

from cardtable.platform.nats import NatsConnection
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable_api.events.v1 import events_pb2
from tests.scoring_service.conftest import running_consumer, wait_for_position
from tests.scoring_service.event_log import TableLog, people, publish

OLD_TABLE_ID = "7f1c2a9e-0b5d-4c3e-9a61-2d8f4e6b1c07"
#: A quick Hearts game of 8 batches, serialized with an early form of events.proto in which
#: TableCreated had only game/seats/options, PlayerSeated only seat/player_id, GameStarted no
#: game_number and GameFinished no ended_early/reason (and Event had no other bodies). The
#: last batch carries DealScored 16, 5, 5, 0 and GameFinished with places 4, 2, 2, 1.
OLD_BATCHES_HEX = [
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d31220608bce2cfaa062a210a020801521b0a0668656172747310041a0f0a0d0a05717569636b120474727565"
    "3001",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d32220608f8e2cfaa062a0b0a0208015a051203616e6e3002",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d33220608b4e3cfaa062a0d0a0208015a0708011203626f623003",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d34220608f0e3cfaa062a0c0a0208015a060802120263793004",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d35220608ace4cfaa062a0d0a0208015a07080312036465653005",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d36220608e8e4cfaa062a1b0a0208016a1508021203616e6e1203626f621202637912036465653006",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d37220608a4e5cfaa062a640a0208018a015d0a5b0a0b4465616c53746172746564120208011a480a170a0a63"
    "617264735f656163681209110000000000002a400a130a066465616c657212091100000000000000400a180a0b"
    "6465616c5f6e756d626572120911000000000000f03f3007",
    "0801122437663163326139652d306235642d346333652d396136312d3264386634653662316330371a05636d64"
    "2d38220608e0e5cfaa062aac010a0208018a01a4010aa1010a0a4465616c53636f726564120208011a8e010a38"
    "0a0673636f726573122e322c0a091100000000000030400a091100000000000014400a09110000000000001440"
    "0a091100000000000000000a380a06746f74616c73122e322c0a091100000000000030400a0911000000000000"
    "14400a091100000000000014400a091100000000000000000a180a0b6465616c5f6e756d626572120911000000"
    "000000f03f2a90010a0208018a0188010a85010a0947616d65456e646564120208011a740a380a06706c616365"
    "73122e322c0a091100000000000010400a091100000000000000400a091100000000000000400a091100000000"
    "0000f03f0a380a06746f74616c73122e322c0a091100000000000030400a091100000000000014400a09110000"
    "0000000014400a091100000000000000002a130a020801ba010c0a04100505001204040202013008",
]


async def test_a_stored_older_game_is_still_projected(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    names = consumer_settings.log
    sequences = [
        (
            await nats_connection.jetstream.publish(
                names.table_subject(OLD_TABLE_ID),
                bytes.fromhex(text),
                headers={"Cardtable-Schema": "1"},
            )
        ).seq
        for text in OLD_BATCHES_HEX
    ]
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, names.stream, sequences[-1])

    assert await projection_pool.fetchval("SELECT count(*) FROM dead_letters") == 0
    game = await projection_pool.fetchrow(
        "SELECT game, status, options, settings, game_number, created_by FROM games "
        "WHERE table_id = $1",
        OLD_TABLE_ID,
    )
    assert dict(game) == {
        "game": "hearts",
        "status": "finished",
        "options": '{"quick": "true"}',
        "settings": "{}",
        "game_number": 0,
        "created_by": "",
    }
    players = await projection_pool.fetch(
        "SELECT player_id, players.kind, total, place, rating_change FROM game_players "
        "JOIN players USING (player_id) WHERE table_id = $1 ORDER BY seat",
        OLD_TABLE_ID,
    )
    # Hearts' places +45, -5, -15, -25, the two tied seconds sharing -5 and -15.
    assert [tuple(r) for r in players] == [
        ("ann", "person", 16, 4, -25.0),
        ("bob", "person", 5, 2, -10.0),
        ("cy", "person", 5, 2, -10.0),
        ("dee", "person", 0, 1, 45.0),
    ]
    contract = await projection_pool.fetchval(
        "SELECT contract FROM deals WHERE table_id = $1", OLD_TABLE_ID
    )
    assert contract == "no pass"


async def test_fields_and_events_from_a_newer_writer_are_ignored(
    nats_connection: NatsConnection,
    projection_pool: asyncpg.Pool,
    consumer_settings: ConsumerSettings,
) -> None:
    log = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=91, options={"quick": "true"})
    log.play()
    # An event kind added after this reader was built (field 40 of Event's oneof), and a new
    # field (99) on GameFinished: both are unknown fields here.
    unknown_event = events_pb2.Event.FromString(bytes.fromhex("0a020801c20203120161"))
    for batch in log.batches:
        batch.events.append(unknown_event)
    last = log.batches[-1]
    finished = last.events[-2].game_finished
    finished.MergeFromString(bytes.fromhex("9a0603666f6f"))
    assert bytes.fromhex("9a0603666f6f") in finished.SerializeToString()

    sequences = await publish(nats_connection.jetstream, consumer_settings.log, log.batches)
    async with running_consumer(nats_connection, projection_pool, consumer_settings):
        await wait_for_position(projection_pool, consumer_settings.log.stream, sequences[-1])

    assert await projection_pool.fetchval("SELECT count(*) FROM dead_letters") == 0
    assert await projection_pool.fetchval("SELECT count(*) FROM rating_changes") == 4
