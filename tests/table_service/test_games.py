"""Complete games of all four games through gRPC, one scripted client per seat."""

from __future__ import annotations

import json
import random

import pytest

from cardtable.engine.cards import parse_cards
from cardtable.engine.record import load_record, verify_record
from cardtable.engine.registry import game_spec
from cardtable.engine.shuffle import check_shuffle
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, play_to_the_end

GAMES = [
    ("hearts", 4, {"quick": "true"}),
    ("whist", 3, {}),
    ("358", 3, {}),
    ("belote", 4, {}),
]


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_complete_game_through_grpc(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    rng = random.Random(game)
    players = {}
    host = cluster.player("host")
    table_id = await host.create(game, seats, options)
    for seat in range(seats):
        player = cluster.player(f"p{seat}")
        assert await player.join(table_id, seat) == seat
        players[seat] = player
    moves = await play_to_the_end(table_id, players, rng)
    assert moves > 0
    final = await host.view(table_id, None)
    assert final.status == "finished"
    assert final.game_status.over
    assert sorted(final.game_status.places)[0] == 1

    reply = await host.stub.GetGameRecord(table_pb2.GetGameRecordRequest(table_id=table_id))
    record = json.loads(reply.record_json)
    report = verify_record(load_record(record))
    assert report.ok, report.problem
    assert list(report.totals) == list(final.game_status.totals)
    assert sum(len(deal["actions"]) for deal in record["deals"]) == moves
    deck = sorted(parse_cards(record["deals"][0]["deck"]))
    assert tuple(deck) == game_spec(game).new_game(seats, options, 0).deck()
    for deal in record["deals"]:
        proof = deal["shuffle"]
        assert (
            check_shuffle(proof["seed"], proof["commitment"], deck, parse_cards(deal["deck"]))
            is None
        )
