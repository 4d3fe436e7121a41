"""Per-player quotas and rate limits, alone and against the real table service: each refusal is
RESOURCE_EXHAUSTED with a sentence naming the limit, and nothing is appended."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from cardtable.client.table_pipeline import PipelinedTableStub
from cardtable.table_service.errors import TableError
from cardtable.table_service.quotas import (
    PlayerTurns,
    QuotaExceededError,
    QuotaSettings,
    RateLimiter,
    WatchCounter,
)
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from tests.table_service.harness import BOT, NO_TIMERS, Cluster, Player

EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


def test_the_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        limiter.take("alice")
    with pytest.raises(QuotaExceededError) as refused:
        limiter.take("alice")
    assert "at most 2 a second per player" in str(refused.value)
    assert refused.value.retry_after_seconds == pytest.approx(0.5)
    limiter.take("bob")  # each player has a bucket of their own
    now[0] = 0.5
    limiter.take("alice")
    with pytest.raises(QuotaExceededError):
        limiter.take("alice")


def test_watch_streams_are_counted_per_player_and_per_replica() -> None:
    counter = WatchCounter(
        QuotaSettings(watches_per_player=2, watches_per_replica=4, anonymous_watches_per_replica=1)
    )
    first, second = counter.hold("alice"), counter.hold("alice")
    with pytest.raises(QuotaExceededError, match="the most one player may"):
        counter.hold("alice")
    anonymous = counter.hold(None)
    with pytest.raises(QuotaExceededError, match="without a player token"):
        counter.hold(None)
    counter.hold("bob")
    with pytest.raises(QuotaExceededError, match="4 watch streams open, its limit"):
        counter.hold("carol")
    first()
    first()  # giving a stream back twice counts once
    counter.hold("alice")
    second()
    anonymous()
    assert isinstance(QuotaExceededError("x", "y"), TableError)
    lifted = WatchCounter(QuotaSettings(watches_per_player=0, enabled=False))
    lifted.hold("alice")


async def test_a_players_counted_commands_take_turns_and_leave_nothing_behind() -> None:
    turns, order = PlayerTurns(), []

    async def command(player: str, name: str) -> None:
        async with turns.turn(player):
            order.append(f"{name} starts")
            await asyncio.sleep(0.01)
            order.append(f"{name} ends")

    await asyncio.gather(command("alice", "a1"), command("alice", "a2"), command("bob", "b1"))
    assert order.index("a1 ends") < order.index("a2 starts")
    assert order.index("b1 starts") < order.index("a1 ends")  # bob is not held up by alice
    assert turns.players == 0


async def test_open_tables_per_player_are_limited_and_nothing_is_appended(
    quota_cluster: Cluster,
) -> None:
    cluster = quota_cluster
    flooder = cluster.player("flooder")
    for _ in range(3):
        await flooder.create("hearts", 4, {"quick": "true"}, NO_TIMERS)
    before = await _messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await flooder.create("hearts", 4, {"quick": "true"}, NO_TIMERS)
    assert refused.value.code() == EXHAUSTED
    assert "3 open tables that have not started or that computer players" in (
        refused.value.details() or ""
    )
    assert await _messages(cluster) == before
    # another player is not held back by the first one's tables
    await cluster.player("patient").create("hearts", 4, {"quick": "true"}, NO_TIMERS)


async def test_tables_that_computer_players_alone_play_count_as_open_ones(
    quota_cluster: Cluster,
) -> None:
    """Tables nobody sits at would otherwise start full of computer players without bound."""
    cluster = quota_cluster
    flooder = cluster.player("flooder")
    filled = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=True, fill_wait_ms=100)
    tables = [await flooder.create("hearts", 4, {"quick": "true"}, filled) for _ in range(3)]
    for table_id in tables:
        await _until_running(flooder, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await flooder.create("hearts", 4, {"quick": "true"}, filled)
    assert refused.value.code() == EXHAUSTED
    assert "computer players alone play" in (refused.value.details() or "")


async def test_computer_players_watch_streams_are_not_held_to_a_persons_quota(
    quota_cluster: Cluster,
) -> None:
    """The bot service watches every table it plays under one id: TIGHT_QUOTAS allow a
    person 2 streams, and a refused stream would leave a computer seat unplayed."""
    cluster = quota_cluster
    host = cluster.player("host")
    tables = [await host.create("hearts", 4, {"quick": "true"}, NO_TIMERS) for _ in range(3)]
    bots = cluster.player("bots:replica", BOT)
    streams = [
        bots.stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id), metadata=bots.metadata)
        for table_id in tables
    ]
    for stream in streams:
        assert (await stream.read()).version >= 1
    for stream in streams:
        stream.cancel()


async def _until_running(player: Player, table_id: str) -> None:
    for _ in range(100):
        if (await player.view(table_id, None)).status == "running":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"table {table_id} never started")


async def test_seats_per_player_are_limited_at_open_and_running_tables(
    quota_cluster: Cluster,
) -> None:
    """TIGHT_QUOTAS allow 4 seats: the fifth join is refused until a seat is given up."""
    cluster = quota_cluster
    flooder = cluster.player("flooder")
    hosts = [cluster.player(f"host-{number}") for number in range(6)]
    tables = [await host.create("hearts", 4, {"quick": "true"}, NO_TIMERS) for host in hosts]
    for table_id in tables[:4]:
        await flooder.join(table_id)
    before = await _messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await flooder.join(tables[4])
    assert refused.value.code() == EXHAUSTED
    assert "you hold 4 seats at open and running tables" in (refused.value.details() or "")
    assert await _messages(cluster) == before
    # a seat at a running game counts as much as one at an open table
    for number in range(3):
        await hosts[number].join(tables[0])
    assert (await flooder.view(tables[0], None)).status == "running"
    with pytest.raises(grpc.aio.AioRpcError) as still:
        await flooder.join(tables[5])
    assert still.value.code() == EXHAUSTED
    # leaving the running game hands the seat to a computer player: it no longer counts
    await flooder.leave(tables[0])
    await flooder.join(tables[4])
    assert (
        cluster.registry.get_sample_value(
            "cardtable_table_quota_refusals_total", {"limit": "seats_per_player"}
        )
        == 2
    )
    # the quota is the flooder's alone: the others still join
    await hosts[5].join(tables[5])
    # sitting at a table as it is made counts as a join: refused, and no table is made
    before = await _messages(cluster)
    with pytest.raises(grpc.aio.AioRpcError) as seated:
        await flooder.create_seated("hearts", 0, 4, {"quick": "true"})
    assert seated.value.code() == EXHAUSTED
    assert "you hold 4 seats at open and running tables" in (seated.value.details() or "")
    assert await _messages(cluster) == before


async def test_concurrent_creates_and_joins_of_one_player_never_pass_a_quota_together(
    quota_cluster: Cluster,
) -> None:
    """The lobby counts a table or seat once stored: concurrent calls must not all pass the
    same count (TIGHT_QUOTAS: 3 open tables, 4 seats)."""
    cluster = quota_cluster
    flooder = cluster.player("flooder")
    creates = await asyncio.gather(
        *(flooder.create("hearts", 4, {"quick": "true"}, NO_TIMERS) for _ in range(6)),
        return_exceptions=True,
    )
    assert sum(isinstance(reply, str) for reply in creates) == 3
    hosts = [cluster.player(f"host-{number}") for number in range(3)]
    tables = [
        await host.create("hearts", 4, {"quick": "true"}, NO_TIMERS)
        for host in hosts
        for _ in range(2)
    ]
    joins = await asyncio.gather(
        *(cluster.player("joiner").join(table_id) for table_id in tables), return_exceptions=True
    )
    refused = [reply for reply in joins if isinstance(reply, grpc.aio.AioRpcError)]
    assert len(refused) == 2
    assert {error.code() for error in refused} == {EXHAUSTED}


async def test_a_flood_of_commands_is_rate_limited_with_a_time_to_retry(
    quota_cluster: Cluster,
) -> None:
    cluster = quota_cluster
    flooder = cluster.player("flooder")
    calls = [
        flooder.stub.LeaveTable(
            table_pb2.LeaveTableRequest(command_id=str(uuid.uuid4()), table_id=str(uuid.uuid4())),
            metadata=flooder.metadata,
        )
        for _ in range(30)
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    codes = [result.code() for result in results if isinstance(result, grpc.aio.AioRpcError)]
    assert codes.count(grpc.StatusCode.NOT_FOUND) == 10  # the burst
    assert codes.count(EXHAUSTED) == 20
    refused = next(
        result
        for result in results
        if isinstance(result, grpc.aio.AioRpcError) and result.code() == EXHAUSTED
    )
    assert "at most 5 a second per player" in (refused.details() or "")
    trailing = dict(refused.trailing_metadata() or ())
    assert 0 < int(trailing["retry-after-ms"]) <= 200
    assert (
        cluster.registry.get_sample_value(
            "cardtable_table_quota_refusals_total", {"limit": "mutation_rate"}
        )
        == 20
    )
    # every call was checked, the refused ones too (a benchmark reads this to know they ran)
    assert (
        cluster.registry.get_sample_value(
            "cardtable_table_quota_checks_total", {"check": "mutation_rate"}
        )
        == 30
    )


async def test_watch_streams_beyond_the_limit_are_refused(quota_cluster: Cluster) -> None:
    cluster = quota_cluster
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"}, NO_TIMERS)
    watcher = cluster.player("watcher")
    streams = [
        watcher.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id), metadata=watcher.metadata
        )
        for _ in range(2)
    ]
    for stream in streams:
        assert (await stream.read()).version >= 1
    third = watcher.stub.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id), metadata=watcher.metadata
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await third.read()
    assert refused.value.code() == EXHAUSTED
    assert "the most one player may" in (refused.value.details() or "")
    streams[0].cancel()
    await asyncio.sleep(0.2)
    again = watcher.stub.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id), metadata=watcher.metadata
    )
    assert (await again.read()).version >= 1
    again.cancel()
    streams[1].cancel()


async def _messages(cluster: Cluster) -> int:
    return (await cluster.nats.jetstream.stream_info(cluster.names.stream)).state.messages


async def test_a_pipelined_flood_is_told_when_to_retry_as_a_unary_one_is(
    quota_cluster: Cluster,
) -> None:
    cluster = quota_cluster
    flooder = cluster.player("piper")
    channel = grpc.aio.insecure_channel(cluster.table_address)
    cluster.channels.append(channel)
    stub = PipelinedTableStub(channel)
    calls = [
        stub.MakeMove(
            table_pb2.MakeMoveRequest(
                command_id=str(uuid.uuid4()), table_id=str(uuid.uuid4()), seat=0, action="pass"
            ),
            metadata=flooder.metadata,
        )
        for _ in range(30)
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    refused = [
        result
        for result in results
        if isinstance(result, grpc.aio.AioRpcError) and result.code() == EXHAUSTED
    ]
    assert len(refused) == 20
    for error in refused:
        assert "at most 5 a second per player" in (error.details() or "")
        trailing = dict(error.trailing_metadata() or ())
        assert 0 < int(trailing["retry-after-ms"]) <= 200
    others = [r for r in results if isinstance(r, grpc.aio.AioRpcError) and r not in refused]
    assert {error.code() for error in others} == {grpc.StatusCode.NOT_FOUND}
    assert all(not dict(error.trailing_metadata() or ()) for error in others)
