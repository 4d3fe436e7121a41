"""Bad calls are refused with the right code, and the stream stays exactly as it was."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from cardtable.platform.tokens import TokenCodec, TokenRefusedError
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import Cluster, Player

StatusCode = grpc.StatusCode


async def _started_hearts(cluster: Cluster) -> tuple[str, dict[int, Player]]:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {}
    for seat in range(4):
        players[seat] = cluster.player(f"p{seat}")
        await players[seat].join(table_id, seat)
    return table_id, players


async def _refused(
    cluster: Cluster, table_id: str, call: Callable[[], Awaitable[Any]], code: StatusCode
) -> str:
    before = await cluster.subject_sequence(table_id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call()
    assert caught.value.code() == code, caught.value.details()
    assert await cluster.subject_sequence(table_id) == before, "a refused call wrote an event"
    return caught.value.details() or ""


async def test_refusals_leave_the_log_unchanged(cluster: Cluster) -> None:
    table_id, players = await _started_hearts(cluster)
    me = players[0]
    view = (await me.view(table_id, 0)).seat_view
    pass_cards = "pass " + " ".join(view.choose_cards.cards[:3])
    stranger_key = TokenCodec("another-key-that-is-long-enough-000000000")

    def move(player: Player, seat: int, action: str, **extra: Any) -> Callable[[], Awaitable[Any]]:
        request = table_pb2.MakeMoveRequest(
            command_id=str(uuid.uuid4()), table_id=table_id, seat=seat, action=action, **extra
        )
        return lambda: player.stub.MakeMove(request, metadata=player.metadata)

    no_token = Player(me.stub, "", "nobody")
    await _refused(cluster, table_id, move(no_token, 0, pass_cards), StatusCode.UNAUTHENTICATED)
    forged = Player(me.stub, stranger_key.issue("p0"), "p0")
    await _refused(cluster, table_id, move(forged, 0, pass_cards), StatusCode.UNAUTHENTICATED)
    expired = Player(me.stub, cluster.tokens.issue("p0", ttl_seconds=-10), "p0")
    details = await _refused(
        cluster, table_id, move(expired, 0, pass_cards), StatusCode.UNAUTHENTICATED
    )
    assert "expired" in details
    await _refused(cluster, table_id, move(players[1], 0, pass_cards), StatusCode.PERMISSION_DENIED)
    details = await _refused(
        cluster, table_id, move(me, 0, "play 2C"), StatusCode.FAILED_PRECONDITION
    )
    assert details == "it is time to pass three cards left"
    await _refused(cluster, table_id, move(me, 0, "play ZZ"), StatusCode.INVALID_ARGUMENT)
    await _refused(cluster, table_id, move(me, 0, "x" * 500), StatusCode.INVALID_ARGUMENT)
    await _refused(cluster, table_id, move(me, 9, pass_cards), StatusCode.INVALID_ARGUMENT)
    missing_id = table_pb2.MakeMoveRequest(table_id=table_id, seat=0, action=pass_cards)
    await _refused(
        cluster,
        table_id,
        lambda: me.stub.MakeMove(missing_id, metadata=me.metadata),
        StatusCode.INVALID_ARGUMENT,
    )
    await _refused(
        cluster,
        table_id,
        move(me, 0, pass_cards, expected_version=1),
        StatusCode.ABORTED,
    )
    # someone else's hand is not viewable
    await _refused(cluster, table_id, lambda: me.view(table_id, 1), StatusCode.PERMISSION_DENIED)
    # the move itself is fine
    await me.move(table_id, 0, pass_cards)


async def test_unknown_and_malformed_tables(cluster: Cluster) -> None:
    me = cluster.player("p0")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await me.view(str(uuid.uuid4()), None)
    assert caught.value.code() == StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await me.view("not-a-table", None)
    assert caught.value.code() == StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await me.create("poker")
    assert caught.value.code() == StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await me.create("hearts", 5)
    assert caught.value.code() == StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await me.create("hearts", 4, {"speed": "fast"})
    assert caught.value.code() == StatusCode.INVALID_ARGUMENT


async def test_lobby_rules(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("belote")
    assert await host.join(table_id, 2) == 2
    other = cluster.player("other")
    await _refused(
        cluster, table_id, lambda: other.join(table_id, 2), StatusCode.FAILED_PRECONDITION
    )
    await _refused(cluster, table_id, lambda: host.join(table_id), StatusCode.FAILED_PRECONDITION)
    details = await _refused(
        cluster,
        table_id,
        lambda: host.stub.StartGame(
            table_pb2.StartGameRequest(command_id="s1", table_id=table_id), metadata=host.metadata
        ),
        StatusCode.FAILED_PRECONDITION,
    )
    assert "not full" in details
    assert await other.join(table_id) == 0
    await other.leave(table_id)
    assert await other.join(table_id) == 0


def test_rotated_keys_still_verify_old_tokens() -> None:
    old = TokenCodec("old-signing-key-0123456789abcdef0123456789")
    new = TokenCodec("new-signing-key-0123456789abcdef0123456789", previous_keys=(old._key,))
    token = old.issue("alice")
    assert new.verify(token).player_id == "alice"
    stranger = TokenCodec("zzz-signing-key-0123456789abcdef0123456789")
    with pytest.raises(TokenRefusedError):
        stranger.verify(token)
