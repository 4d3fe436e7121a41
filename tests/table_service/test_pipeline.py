"""TableService.Pipeline: many players' CreateTable, JoinTable, GetTable and MakeMove calls over
one stream.

Over real gRPC against real NATS and the real rules service: each pipelined call is answered
as its unary method answers it (same view, same move, same refusal with the same code), calls
with different players' tokens share one stream and one message, a refused call appends
nothing and leaves the stream working, and a retried command makes no second event.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import grpc
import pytest

from cardtable.client.table_pipeline import PipelinedTableStub
from cardtable.table_service import pipeline
from cardtable_api.common.v1 import common_pb2
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import (
    NO_TIMERS,
    Cluster,
    Player,
    play_to_the_end,
)

GAMES = [("hearts", 4, {"quick": "true"}), ("358", 3, {}), ("belote", 4, {}), ("whist", 3, {})]


async def seated(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> tuple[str, dict[int, Player]]:
    """A started table whose players joined over unary calls."""
    table_id = await cluster.player("host").create(game, seats, options)
    players = {seat: cluster.player(f"{game}-pipelined-{seat}") for seat in range(seats)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    return table_id, players


def pipelined(
    cluster: Cluster, players: dict[int, Player]
) -> tuple[PipelinedTableStub, dict[int, Player]]:
    """The same players, with their GetTable and MakeMove going over one shared stream."""
    channel = grpc.aio.insecure_channel(cluster.table_address)
    cluster.channels.append(channel)
    stub = PipelinedTableStub(channel)
    return stub, {
        seat: Player(stub, player.token, player.player_id)  # type: ignore[arg-type]
        for seat, player in players.items()
    }


class RawStream:
    """A Pipeline stream written by hand, to see which calls share a message."""

    def __init__(self, cluster: Cluster, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.call = cluster.stub().Pipeline(metadata=metadata)  # type: ignore[call-arg]

    async def ask(self, *calls: table_pb2.PipelinedCall) -> dict[int, table_pb2.PipelinedReply]:
        """Send ``calls`` in one message; the replies by id, once all have come."""
        await self.call.write(table_pb2.PipelineRequest(calls=calls))
        replies: dict[int, table_pb2.PipelinedReply] = {}
        while len(replies) < len(calls):
            response = await self.call.read()
            assert response is not grpc.aio.EOF
            replies.update((reply.id, reply) for reply in response.replies)
        return replies

    async def close(self) -> None:
        await self.call.done_writing()


def get_table(call_id: int, player: Player, table_id: str, seat: int) -> table_pb2.PipelinedCall:
    return table_pb2.PipelinedCall(
        id=call_id,
        token=player.token,
        get_table=table_pb2.GetTableRequest(table_id=table_id, seat=seat),
    )


def make_move(
    call_id: int, player: Player | None, table_id: str, seat: int, action: str, command_id: str = ""
) -> table_pb2.PipelinedCall:
    return table_pb2.PipelinedCall(
        id=call_id,
        token=player.token if player is not None else "",
        make_move=table_pb2.MakeMoveRequest(
            command_id=command_id or str(uuid.uuid4()), table_id=table_id, seat=seat, action=action
        ),
    )


def code_of(reply: table_pb2.PipelinedReply) -> grpc.StatusCode:
    assert reply.HasField("failed"), reply
    return next(code for code in grpc.StatusCode if code.value[0] == reply.failed.code)


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
async def test_a_whole_game_is_played_over_one_stream(
    cluster: Cluster, game: str, seats: int, options: dict[str, str]
) -> None:
    table_id, players = await seated(cluster, game, seats, options)
    stub, over_stream = pipelined(cluster, players)
    try:
        moves = await asyncio.wait_for(
            play_to_the_end(table_id, over_stream, random.Random(f"pipeline-{game}")), 120
        )
    finally:
        await stub.close()
    final = await players[0].view(table_id, 0)
    assert final.status == "finished" and final.game_status.over
    assert moves > 0 and final.version > moves


async def test_a_table_is_opened_seated_and_played_over_one_stream(cluster: Cluster) -> None:
    unary = {seat: cluster.player(f"opener-{seat}") for seat in range(4)}
    stub, players = pipelined(cluster, unary)
    try:
        table_id = await players[0].create("hearts", 4, {"quick": "true"})
        # The four players take their seats at once; each call is its own player's.
        seats = await asyncio.gather(*(players[seat].join(table_id, seat) for seat in range(4)))
        assert seats == [0, 1, 2, 3]
        started = await unary[2].view(table_id, 2)
        assert started.status == "running"
        assert [info.player_id for info in started.seats] == [f"opener-{s}" for s in range(4)]
        moves = await asyncio.wait_for(
            play_to_the_end(table_id, players, random.Random("opened over the pipeline")), 120
        )
    finally:
        await stub.close()
    final = await unary[0].view(table_id, 0)
    assert final.status == "finished" and moves > 0


async def test_create_and_join_over_the_stream_are_idempotent_and_refused_as_unary(
    cluster: Cluster,
) -> None:
    host, guest, rival = (cluster.player(name) for name in ("host", "guest", "rival"))
    create = table_pb2.CreateTableRequest(
        command_id=str(uuid.uuid4()),
        game="hearts",
        options=common_pb2.GameOptions(values={"quick": "true"}),
        settings=NO_TIMERS,
    )
    stream = RawStream(cluster)
    first = await stream.ask(table_pb2.PipelinedCall(id=1, token=host.token, create_table=create))
    again = await stream.ask(table_pb2.PipelinedCall(id=2, token=host.token, create_table=create))
    table_id = first[1].create_table.table_id
    assert again[2].create_table == first[1].create_table  # the retry found the same table
    assert await cluster.subject_sequence(table_id) == first[1].create_table.version

    join = table_pb2.JoinTableRequest(command_id=str(uuid.uuid4()), table_id=table_id, seat=1)
    joined = await stream.ask(table_pb2.PipelinedCall(id=3, token=guest.token, join_table=join))
    retried = await stream.ask(table_pb2.PipelinedCall(id=4, token=guest.token, join_table=join))
    assert joined[3].join_table.seat == 1 and retried[4].join_table == joined[3].join_table
    after_join = await cluster.subject_sequence(table_id)

    taken = table_pb2.JoinTableRequest(command_id=str(uuid.uuid4()), table_id=table_id, seat=1)
    refusals = {
        5: table_pb2.PipelinedCall(id=5, token=rival.token, join_table=taken),
        6: table_pb2.PipelinedCall(
            id=6,
            token=rival.token,
            create_table=table_pb2.CreateTableRequest(command_id=str(uuid.uuid4()), game="chess"),
        ),
        7: table_pb2.PipelinedCall(id=7, create_table=create),  # no token at all
    }
    replies = await stream.ask(*refusals.values())
    await stream.close()
    for call_id, request in ((5, rival.join(table_id, 1)), (6, rival.create("chess"))):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await request
        assert code_of(replies[call_id]) == refused.value.code()
        assert replies[call_id].failed.message == refused.value.details()
    assert code_of(replies[7]) == grpc.StatusCode.UNAUTHENTICATED
    assert await cluster.subject_sequence(table_id) == after_join  # nothing appended


async def test_many_tables_share_one_stream_and_each_call_gets_its_unary_answer(
    cluster: Cluster,
) -> None:
    tables = [await seated(cluster, "hearts", 4, {"quick": "true"}) for _ in range(3)]
    stub, _ = pipelined(cluster, tables[0][1])
    try:
        # Every seat of every table reads its view at once over the one stream.
        views = await asyncio.gather(
            *(
                stub.GetTable(
                    table_pb2.GetTableRequest(table_id=table_id, seat=seat),
                    metadata=player.metadata,
                )
                for table_id, players in tables
                for seat, player in players.items()
            )
        )
    finally:
        await stub.close()
    unary = [
        await player.view(table_id, seat)
        for table_id, players in tables
        for seat, player in players.items()
    ]
    assert views == unary
    hands = [view.seat_view.hand for view in views]
    assert all(len(hand) == 13 for hand in hands)
    assert len({card for hand in hands[:4] for card in hand}) == 52  # each seat its own cards


async def test_calls_with_different_tokens_share_a_message(cluster: Cluster) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    stream = RawStream(cluster)
    replies = await stream.ask(
        *(get_table(seat + 1, players[seat], table_id, seat) for seat in players)
    )
    await stream.close()
    for seat, player in players.items():
        assert replies[seat + 1].get_table == await player.view(table_id, seat)


async def test_refused_calls_have_their_unary_codes_append_nothing_and_the_stream_goes_on(
    cluster: Cluster,
) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    before = await cluster.subject_sequence(table_id)
    view = (await players[0].view(table_id, 0)).seat_view
    pass_cards = "pass " + " ".join(view.choose_cards.cards[:3])
    stranger = cluster.player("stranger")
    stream = RawStream(cluster)
    refusals = {
        1: (make_move(1, None, table_id, 0, pass_cards), grpc.StatusCode.UNAUTHENTICATED),
        2: (
            table_pb2.PipelinedCall(
                id=2,
                token="not-a-token",
                make_move=table_pb2.MakeMoveRequest(
                    command_id=str(uuid.uuid4()), table_id=table_id, seat=0, action="x"
                ),
            ),
            grpc.StatusCode.UNAUTHENTICATED,
        ),
        3: (
            make_move(3, players[1], table_id, 0, pass_cards),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        4: (make_move(4, stranger, table_id, 0, pass_cards), grpc.StatusCode.PERMISSION_DENIED),
        5: (make_move(5, players[0], table_id, 0, "play QS"), grpc.StatusCode.FAILED_PRECONDITION),
        6: (make_move(6, players[0], str(uuid.uuid4()), 0, "x"), grpc.StatusCode.NOT_FOUND),
        7: (make_move(7, players[0], "../etc", 0, "x"), grpc.StatusCode.INVALID_ARGUMENT),
        8: (get_table(8, players[1], table_id, 0), grpc.StatusCode.PERMISSION_DENIED),
        9: (
            table_pb2.PipelinedCall(id=9, token=players[0].token),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        11: (
            table_pb2.PipelinedCall(
                id=11,
                token="x" * 1_000_000,  # no header could carry it; a call can
                get_table=table_pb2.GetTableRequest(table_id=table_id, seat=0),
            ),
            grpc.StatusCode.UNAUTHENTICATED,
        ),
    }
    replies = await stream.ask(*(call for call, _ in refusals.values()))
    for call_id, (_, code) in refusals.items():
        assert code_of(replies[call_id]) == code, (call_id, replies[call_id])
    # The unary call refuses the same way, with the same sentence.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await players[0].move(table_id, 0, "play QS")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.details() == replies[5].failed.message
    assert await cluster.subject_sequence(table_id) == before  # nothing appended

    # The same stream still plays: a legal pass is accepted.
    accepted = await stream.ask(make_move(10, players[0], table_id, 0, pass_cards))
    assert accepted[10].make_move.version > 0
    assert await cluster.subject_sequence(table_id) == before + 1
    await stream.close()


async def test_a_call_without_a_token_uses_the_streams_own(cluster: Cluster) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    stream = RawStream(cluster, metadata=players[2].metadata)
    call = get_table(1, players[2], table_id, 2)
    call.token = ""
    own = await stream.ask(call)
    other = table_pb2.PipelinedCall(
        id=2, get_table=table_pb2.GetTableRequest(table_id=table_id, seat=3)
    )
    refused = await stream.ask(other)
    await stream.close()
    assert own[1].get_table == await players[2].view(table_id, 2)
    assert code_of(refused[2]) == grpc.StatusCode.PERMISSION_DENIED


async def test_a_retried_command_makes_one_event(cluster: Cluster) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    view = (await players[0].view(table_id, 0)).seat_view
    action = "pass " + " ".join(view.choose_cards.cards[:3])
    before = await cluster.subject_sequence(table_id)
    stream = RawStream(cluster)
    command_id = str(uuid.uuid4())
    first = await stream.ask(make_move(1, players[0], table_id, 0, action, command_id))
    again = await stream.ask(make_move(2, players[0], table_id, 0, action, command_id))
    await stream.close()
    assert first[1].make_move == again[2].make_move
    assert await cluster.subject_sequence(table_id) == before + 1


async def test_concurrent_conflicting_moves_over_one_stream_only_one_lands(
    cluster: Cluster,
) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    view = (await players[0].view(table_id, 0)).seat_view
    rng = random.Random("conflicting passes")
    cards = view.choose_cards.cards
    passes = sorted({"pass " + " ".join(sorted(rng.sample(cards, 3))) for _ in range(30)})[:20]
    before = await cluster.subject_sequence(table_id)
    stream = RawStream(cluster)
    replies = await stream.ask(
        *(
            make_move(index + 1, players[0], table_id, 0, action)
            for index, action in enumerate(passes)
        )
    )
    await stream.close()
    landed = [reply for reply in replies.values() if reply.HasField("make_move")]
    assert len(landed) == 1  # seat 0 passes once; every other pass is refused
    assert {code_of(r) for r in replies.values() if r.HasField("failed")} <= {
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ABORTED,
    }
    assert await cluster.subject_sequence(table_id) == before + 1


async def test_an_undecodable_message_ends_the_stream_with_invalid_argument(
    cluster: Cluster,
) -> None:
    channel = grpc.aio.insecure_channel(cluster.table_address)
    cluster.channels.append(channel)
    raw = channel.stream_stream("/cardtable.table.v1.TableService/Pipeline")
    call = raw()
    await call.write(b"\xff\xff\xff")
    await call.done_writing()
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        async for _ in call:
            pass
    assert ended.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_more_calls_than_may_run_at_once_are_all_answered(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "MAX_CALLS_IN_FLIGHT", 2)
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    stream = RawStream(cluster)
    calls = [get_table(index + 1, players[index % 4], table_id, index % 4) for index in range(12)]
    replies = await stream.ask(*calls)
    await stream.close()
    assert sorted(replies) == list(range(1, 13))
    assert all(reply.HasField("get_table") for reply in replies.values())


def test_replies_are_split_into_messages_under_the_size_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = table_pb2.GetTableResponse(table_id="t" * 100, game="hearts")
    monkeypatch.setattr(pipeline, "MESSAGE_BYTES", 3 * reply.ByteSize())
    messages = pipeline._messages([(index, "get_table", reply) for index in range(10)])
    assert [len(message.replies) for message in messages] == [3, 3, 3, 1]
    assert all(message.ByteSize() <= 4 * reply.ByteSize() for message in messages)
    replies = [answered for message in messages for answered in message.replies]
    assert [answered.id for answered in replies] == list(range(10))
    assert all(answered.get_table == reply for answered in replies)


async def test_ending_the_stream_cancels_a_running_call_and_nothing_is_appended(
    cluster: Cluster,
) -> None:
    table_id, players = await seated(cluster, "hearts", 4, {"quick": "true"})
    view = (await players[0].view(table_id, 0)).seat_view
    pass_cards = "pass " + " ".join(view.choose_cards.cards[:3])
    before = await cluster.subject_sequence(table_id)
    rules = cluster.parts.app.rules
    entered, cancelled = asyncio.Event(), asyncio.Event()

    async def stuck_apply_action(request: Any) -> Any:
        entered.set()
        try:
            await asyncio.Event().wait()  # a rules service that never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise

    rules.apply_action = stuck_apply_action  # type: ignore[method-assign]
    stream = RawStream(cluster)
    await stream.call.write(
        table_pb2.PipelineRequest(calls=[make_move(1, players[0], table_id, 0, pass_cards)])
    )
    await asyncio.wait_for(entered.wait(), 10)
    stream.call.cancel()
    await asyncio.wait_for(cancelled.wait(), 10)
    assert await cluster.subject_sequence(table_id) == before
