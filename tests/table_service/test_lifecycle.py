"""Lobby and seat life: fill, quick seat, listing, leavers, timers, reclaim, rematch, watch."""

from __future__ import annotations

import asyncio
import base64
import random
import time
import uuid

import grpc
import pytest
from nats.aio.subscription import Subscription

from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import connect_nats
from cardtable.platform.tokens import BOT
from cardtable.table_service.commands import Decision, Table
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import Cluster, Player, pick_action, running_table_service

HANDED = events_pb2.SeatHandedToBot


async def _watch_until(
    player: Player, table_id: str, seat: int | None, predicate: object, limit: float = 15
) -> list[events_pb2.Event]:
    """Events of the viewer's watch stream until one satisfies ``predicate``."""
    request = table_pb2.WatchTableRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    call = player.stub.WatchTable(request, metadata=player.metadata)
    seen: list[events_pb2.Event] = []

    async def read() -> None:
        async for response in call:
            seen.extend(response.events)
            if any(predicate(event) for event in response.events):  # type: ignore[operator]
                return

    try:
        await asyncio.wait_for(read(), limit)
    finally:
        call.cancel()
    return seen


async def _seat_requests(
    subscription: Subscription, count: int, table_id: str
) -> list[events_pb2.BotSeatRequested]:
    """The next ``count`` seat requests published for ``table_id`` (5 s for each)."""
    requests = []
    for _ in range(count):
        message = await subscription.next_msg(timeout=5)
        assert message.headers and message.headers["Table-Id"] == table_id
        requests.append(events_pb2.Event.FromString(message.data).bot_seat_requested)
    return requests


async def test_fill_with_computer_players_after_the_wait(cluster: Cluster) -> None:
    host = cluster.player("host")
    settings = events_pb2.TableSettings(fill_with_bots=True, fill_wait_ms=300)
    table_id = await host.create("hearts", 4, {"quick": "true"}, settings)
    await host.join(table_id, 0)
    subscription = await cluster.nats.client.subscribe(cluster.names.bot_requests)
    events = await _watch_until(host, table_id, 0, lambda event: event.HasField("game_started"))
    fills = [event.seat_handed_to_bot for event in events if event.HasField("seat_handed_to_bot")]
    assert sorted(fill.seat for fill in fills) == [1, 2, 3]
    assert {(fill.handover_reason, fill.reason) for fill in fills} == {(HANDED.REASON_FILL, "fill")}
    requests = await _seat_requests(subscription, 3, table_id)
    assert sorted(request.seat for request in requests) == [1, 2, 3]
    # whose table it is: the bot service shares its seats between creators when it is full
    assert {request.created_by for request in requests} == {"host"}
    assert {(request.request_reason, request.reason) for request in requests} == {
        (events_pb2.BotSeatRequested.REASON_FILL, "fill")
    }
    await subscription.unsubscribe()
    table = await host.view(table_id, 0)
    assert table.status == "running" and table.created_by == "host"
    assert [seat.kind for seat in table.seats][1:] == [events_pb2.PLAYER_KIND_BOT] * 3
    # a computer player acts for a bot seat with a bot token, never for a person's seat
    bot = cluster.computer(table_id, 1)
    bot_view = (await bot.view(table_id, 1)).seat_view
    await bot.move(table_id, 1, pick_action(bot_view, random.Random(1)))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await bot.view(table_id, 0)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # nor for another computer seat: a bot token names its one seat, and one naming none
    # (or a person's token with a computer player's id) plays no seat at all
    for other in (
        bot,
        cluster.player("bots:test", BOT),
        cluster.computer("another-table", 2),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await other.view(table_id, 2)
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cluster.player(f"bot:{table_id}:2").view(table_id, 2)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "computer players" in (caught.value.details() or "")


async def _created_settings(player: Player, table_id: str) -> events_pb2.TableSettings:
    events = await _watch_until(
        player, table_id, None, lambda event: event.HasField("table_created")
    )
    (created,) = [event.table_created for event in events if event.HasField("table_created")]
    return created.settings


def _settings_tuple(settings: events_pb2.TableSettings) -> tuple[int, bool, int, str]:
    return (
        settings.turn_timer_ms,
        settings.fill_with_bots,
        settings.fill_wait_ms,
        settings.bot_strategy,
    )


async def test_each_setting_left_unset_takes_the_rules_default(cluster: Cluster) -> None:
    host = cluster.player("host")
    asked = {
        "nothing": None,
        "a strategy only": events_pb2.TableSettings(bot_strategy="random"),
        "a level only": events_pb2.TableSettings(bot_strategy="hard"),
        "timer and fill off": events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False),
    }
    resolved = {}
    table_ids = {}
    for name, settings in asked.items():
        table_ids[name] = await host.create("hearts", 4, {"quick": "true"}, settings)
        resolved[name] = _settings_tuple(await _created_settings(host, table_ids[name]))
    assert resolved == {
        "nothing": (30_000, True, 20_000, "rules"),
        "a strategy only": (30_000, True, 20_000, "random"),
        "a level only": (30_000, True, 20_000, "hard"),
        "timer and fill off": (0, False, 20_000, "rules"),
    }
    # The defaults act: no fill before its 20 s wait, and a 30 s timer once the game runs.
    table_id = table_ids["a strategy only"]
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    await players[0].join(table_id, 0)
    await asyncio.sleep(1.0)
    table = await host.view(table_id, None)
    assert table.status == "open"
    assert [seat.player_id for seat in table.seats] == ["p0", "", "", ""]
    for seat in (1, 2, 3):
        await players[seat].join(table_id, seat)
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("turn_timer_started")
    )
    (timer,) = [
        event.turn_timer_started for event in events if event.HasField("turn_timer_started")
    ]
    assert 28.0 < timer.deadline.ToNanoseconds() / 1e9 - time.time() <= 30.0


async def test_quick_seat_fills_one_table_then_opens_another(cluster: Cluster) -> None:
    table_ids = []
    for index in range(5):
        player = cluster.player(f"quick{index}")
        reply = await player.stub.QuickSeat(
            table_pb2.QuickSeatRequest(command_id=str(uuid.uuid4()), game="belote"),
            metadata=player.metadata,
        )
        table_ids.append(reply.table_id)
    assert len(set(table_ids[:4])) == 1
    assert table_ids[4] != table_ids[0]
    listing = await player.stub.ListTables(table_pb2.ListTablesRequest(game="belote"))
    statuses = {summary.table_id: summary.status for summary in listing.tables}
    assert statuses[table_ids[0]] == "running"
    assert statuses[table_ids[4]] == "open"
    open_only = await player.stub.ListTables(
        table_pb2.ListTablesRequest(game="belote", status="open")
    )
    assert [summary.table_id for summary in open_only.tables] == [table_ids[4]]
    # page tokens are the service's own: a forged one (negative, or not base64) is refused
    for forged in (base64.urlsafe_b64encode(b"-3").decode(), "%%%"):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await player.stub.ListTables(
                table_pb2.ListTablesRequest(game="belote", page_token=forged)
            )
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def _bot_seats_listed(player: Player, table_id: str) -> int:
    """The lobby's count of the seats computer players hold at a running table."""
    listing = await player.stub.ListTables(table_pb2.ListTablesRequest(status="running"))
    (summary,) = [entry for entry in listing.tables if entry.table_id == table_id]
    assert summary.HasField("bot_seats")
    return summary.bot_seats


async def test_leaver_is_replaced_then_reclaims_the_seat(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    assert await _bot_seats_listed(host, table_id) == 0
    await players[2].leave(table_id)
    assert await _bot_seats_listed(host, table_id) == 1  # the bot service's scan reads it
    table = await host.view(table_id, None)
    assert table.seats[2].kind == events_pb2.PLAYER_KIND_BOT
    assert not table.seats[2].connected
    # the leaver no longer sees the seat's cards
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await players[2].view(table_id, 2)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # a computer player passes for seat 2; the others pass too
    bot = cluster.computer(table_id, 2)
    rng = random.Random(4)
    await bot.move(table_id, 2, pick_action((await bot.view(table_id, 2)).seat_view, rng))
    for seat in (0, 1, 3):
        view = (await players[seat].view(table_id, seat)).seat_view
        await players[seat].move(table_id, seat, pick_action(view, rng))
    # play until it is seat 2's turn, then the person takes the seat back with a move
    while True:
        summary = await host.view(table_id, None)
        seat = summary.game_status.to_act[0]
        if seat == 2:
            break
        view = (await players[seat].view(table_id, seat)).seat_view
        await players[seat].move(table_id, seat, pick_action(view, rng))
    legal = (await bot.view(table_id, 2)).seat_view
    await players[2].move(table_id, 2, pick_action(legal, rng))
    table = await host.view(table_id, None)
    assert table.seats[2].player_id == "p2"
    assert table.seats[2].kind == events_pb2.PLAYER_KIND_PERSON
    assert await _bot_seats_listed(host, table_id) == 0
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("seat_reclaimed")
    )
    left = next(event.player_left for event in events if event.HasField("player_left"))
    assert left.disconnected and left.seat == 2


async def test_a_leaver_comes_back_by_joining_again_and_sees_the_seat(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    await players[2].leave(table_id)
    stranger = cluster.player("stranger")
    before = await cluster.subject_sequence(table_id)
    refusals = [
        (stranger, None),  # never sat here
        (players[1], None),  # holds a seat already
        (players[2], 3),  # not the seat they left
    ]
    for player, seat in refusals:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await player.join(table_id, seat)
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "already started" in (caught.value.details() or "")
    assert await cluster.subject_sequence(table_id) == before  # nothing appended
    assert await players[2].join(table_id, 2) == 2
    table = await host.view(table_id, None)
    assert table.seats[2].player_id == "p2" and table.seats[2].connected
    assert table.seats[2].kind == events_pb2.PLAYER_KIND_PERSON
    assert await _bot_seats_listed(host, table_id) == 0
    # their own cards again, and the computer player's token no longer plays the seat
    view = (await players[2].view(table_id, 2)).seat_view
    assert len(view.hand) == 13
    bot = cluster.computer(table_id, 2)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await bot.view(table_id, 2)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    await players[2].move(table_id, 2, pick_action(view, random.Random(3)))
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("seat_reclaimed")
    )
    (reclaimed,) = [event.seat_reclaimed for event in events if event.HasField("seat_reclaimed")]
    assert (reclaimed.seat, reclaimed.player_id) == (2, "p2")
    # a second time: they hold the seat now, so there is nothing to come back to
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await players[2].join(table_id, 2)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def _whist_for_three(
    cluster: Cluster, turn_timer_ms: int
) -> tuple[Player, str, dict[int, Player]]:
    """A running Whist table of three people, p0 to p2, with a turn timer and no fill."""
    host = cluster.player("host")
    settings = events_pb2.TableSettings(turn_timer_ms=turn_timer_ms, fill_with_bots=False)
    table_id = await host.create("whist", 3, {}, settings)
    players = {seat: cluster.player(f"p{seat}") for seat in range(3)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    return host, table_id, players


async def test_three_timeouts_hand_the_seat_to_a_computer(cluster: Cluster) -> None:
    host, table_id, _ = await _whist_for_three(cluster, turn_timer_ms=200)
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("seat_handed_to_bot"), limit=30
    )
    handed = next(
        event.seat_handed_to_bot for event in events if event.HasField("seat_handed_to_bot")
    )
    assert (handed.handover_reason, handed.reason) == (HANDED.REASON_TIMEOUTS, "timeouts")
    timeouts = [event.turn_timed_out for event in events if event.HasField("turn_timed_out")]
    of_seat = [timeout.consecutive for timeout in timeouts if timeout.seat == handed.seat]
    assert of_seat[-1] == 3
    assert all(event.action_taken.by_timeout for event in events if event.HasField("action_taken"))


@pytest.mark.alone  # the other seats must move within their 500 ms timers
async def test_a_move_of_the_players_own_restarts_the_timeout_count(cluster: Cluster) -> None:
    host, table_id, players = await _whist_for_three(cluster, turn_timer_ms=500)
    rng = random.Random(12)
    turns_of_seat_0: list[int] = []  # the table version at each turn of seat 0
    while len(turns_of_seat_0) < 6:
        summary = await host.view(table_id, None)
        seat = summary.game_status.to_act[0]
        if seat == 0 and summary.version not in turns_of_seat_0:
            turns_of_seat_0.append(summary.version)
        if seat != 0 or len(turns_of_seat_0) == 3:  # seat 0 plays its own third turn
            view = (await players[seat].view(table_id, seat)).seat_view
            await players[seat].move(table_id, seat, pick_action(view, rng))
        else:
            await asyncio.sleep(0.02)  # the timer plays seat 0's other turns
    events = [
        event
        async for stored in cluster.parts.app.store.read(table_id)
        for event in stored.batch.events
    ]
    timeouts = [event.turn_timed_out for event in events if event.HasField("turn_timed_out")]
    assert [(timeout.seat, timeout.consecutive) for timeout in timeouts if timeout.seat == 0] == [
        (0, 1),
        (0, 2),
        (0, 1),
        (0, 2),
    ]
    assert not any(event.HasField("seat_handed_to_bot") for event in events)
    assert (await host.view(table_id, None)).seats[0].player_id == "p0"


async def test_a_players_command_id_cannot_take_the_id_of_the_next_timeout(
    cluster: Cluster,
) -> None:
    """The timer's command ids are predictable (``timeout:<turn>``): a player who names their
    own move after the next turn's timeout must not keep that turn from timing out."""
    host, table_id, players = await _whist_for_three(cluster, turn_timer_ms=1000)
    stored = [
        event
        async for batch in cluster.parts.app.store.read(table_id)
        for event in batch.batch.events
    ]
    timer = [event.turn_timer_started for event in stored if event.HasField("turn_timer_started")]
    seat, turn = timer[-1].seats[0], timer[-1].turn
    view = (await players[seat].view(table_id, seat)).seat_view
    await players[seat].move(
        table_id, seat, pick_action(view, random.Random(2)), command_id=f"timeout:{turn + 1}"
    )
    # nobody moves now: the next turn times out, and the timer plays it
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("turn_timed_out"), limit=5
    )
    (timed_out,) = [event.turn_timed_out for event in events if event.HasField("turn_timed_out")]
    assert timed_out.turn == turn + 1


@pytest.mark.alone  # a whole game whose movers must beat their 1 s timers
async def test_a_third_timeout_on_the_last_move_finishes_the_game_once(cluster: Cluster) -> None:
    """Whist, two people left: the last deal's dealer times out on their last three turns.

    The third timeout both ends the game (the last card) and would hand the seat over, which
    would leave one person and end the game a second time: it must end once, with no handover.
    """
    host, table_id, players = await _whist_for_three(cluster, turn_timer_ms=1000)
    deals = 3 * 3 + 12
    first_dealer = (await host.view(table_id, None)).game_status.dealer
    last_dealer = (first_dealer + deals - 1) % 3  # the deal passes to the left
    leaver, other = (last_dealer + 1) % 3, (last_dealer + 2) % 3
    await players[leaver].leave(table_id)
    movers = {last_dealer: players[last_dealer], other: players[other]}
    movers[leaver] = cluster.computer(table_id, leaver)
    rng = random.Random(9)
    while (summary := await host.view(table_id, None)).status != "finished":
        status = summary.game_status
        seat = status.to_act[0]
        last_three_turns = status.deal_number == deals or (
            status.deal_number == deals - 1 and status.current_phase == status.PHASE_PLAY
        )
        if seat == last_dealer and last_three_turns:
            await asyncio.sleep(0.05)  # the timer plays this turn
            continue
        view = (await movers[seat].view(table_id, seat)).seat_view
        await movers[seat].move(table_id, seat, pick_action(view, rng))
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("game_finished"), limit=30
    )
    timeouts = [event.turn_timed_out for event in events if event.HasField("turn_timed_out")]
    assert [(timeout.seat, timeout.consecutive) for timeout in timeouts][-3:] == [
        (last_dealer, 1),
        (last_dealer, 2),
        (last_dealer, 3),
    ]
    assert sum(event.HasField("game_finished") for event in events) == 1
    (finished,) = [event.game_finished for event in events if event.HasField("game_finished")]
    assert not finished.ended_early and finished.end_reason == finished.REASON_GAME_OVER
    assert finished.reason == ""  # the text an older reader compares with
    handed = [event.seat_handed_to_bot for event in events if event.HasField("seat_handed_to_bot")]
    assert [(hand.seat, hand.handover_reason) for hand in handed] == [(leaver, HANDED.REASON_LEFT)]


async def test_game_record_is_refused_while_running_and_watch_resumes(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await host.stub.GetGameRecord(table_pb2.GetGameRecordRequest(table_id=table_id))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    first = await _watch_until(
        players[0], table_id, 0, lambda event: event.HasField("game_started")
    )
    version = (await host.view(table_id, None)).version
    rng = random.Random(5)
    view = (await players[1].view(table_id, 1)).seat_view
    await players[1].move(table_id, 1, pick_action(view, rng))
    request = table_pb2.WatchTableRequest(table_id=table_id, seat=0, from_version=version)
    call = players[0].stub.WatchTable(request, metadata=players[0].metadata)
    response = await asyncio.wait_for(call.read(), 5)
    call.cancel()
    assert response.version == version + 1
    assert first  # the first stream had the start


async def test_rematch_seats_the_same_players(cluster: Cluster) -> None:
    host = cluster.player("host")
    table_id = await host.create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"p{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    rng = random.Random(6)
    while (summary := await host.view(table_id, None)).status != "finished":
        seat = rng.choice(list(summary.game_status.to_act))
        view = (await players[seat].view(table_id, seat)).seat_view
        await players[seat].move(table_id, seat, pick_action(view, rng))
    reply = await players[0].stub.Rematch(
        table_pb2.RematchRequest(command_id="again", table_id=table_id),
        metadata=players[0].metadata,
    )
    again = await players[0].stub.Rematch(
        table_pb2.RematchRequest(command_id="again-2", table_id=table_id),
        metadata=players[0].metadata,
    )
    assert again.table_id == reply.table_id != table_id
    new_table = await host.view(reply.table_id, None)
    assert new_table.status == "running"
    assert [seat.player_id for seat in new_table.seats] == ["p0", "p1", "p2", "p3"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await host.stub.Rematch(
            table_pb2.RematchRequest(command_id="x", table_id=table_id), metadata=host.metadata
        )
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_whist_ends_at_once_when_everyone_else_has_left(cluster: Cluster) -> None:
    host, table_id, players = await _whist_for_three(cluster, turn_timer_ms=0)
    await players[1].leave(table_id)
    await players[2].leave(table_id)
    events = await _watch_until(
        host, table_id, None, lambda event: event.HasField("game_finished"), limit=30
    )
    handed = [event.seat_handed_to_bot for event in events if event.HasField("seat_handed_to_bot")]
    assert [(hand.seat, hand.handover_reason, hand.reason) for hand in handed] == [
        (1, HANDED.REASON_LEFT, "left"),
        (2, HANDED.REASON_LEFT, "left"),
    ]
    (finished,) = [event.game_finished for event in events if event.HasField("game_finished")]
    assert finished.ended_early
    assert (finished.end_reason, finished.reason) == (
        finished.REASON_EVERYONE_ELSE_LEFT,
        "everyone_else_left",
    )


async def test_a_replica_that_dies_between_an_append_and_its_sequel_leaves_nothing_undone(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    """The fill's batch is in the log, but its replica died before the lobby entry and the
    seat requests that follow an append: the next replica to read the table does both, at
    once, instead of leaving the game to its timers (the table's lobby entry said open)."""
    settings = events_pb2.TableSettings(fill_with_bots=True, fill_wait_ms=100)
    async with running_table_service(nats_url, nats_namespace.prefix, rules_address) as first:
        app = first.parts.app
        sequel = app._after_append
        filled = asyncio.Event()

        async def dies_before_the_fills_sequel(table: Table, decision: Decision) -> None:
            if decision.bot_requests:  # the fill's batch: the replica "dies" here
                filled.set()
                return
            await sequel(table, decision)

        app._after_append = dies_before_the_fills_sequel  # type: ignore[method-assign]
        host = first.player("host")
        table_id = await host.create("hearts", 4, {"quick": "true"}, settings)
        await host.join(table_id, 0)
        await asyncio.wait_for(filled.wait(), 10)
        lobby = app.index
        assert lobby is not None
        entry = lobby.get(table_id)
        assert entry is not None and entry.status == "open"  # the lobby missed the fill

    names = LogNames.from_prefix(nats_namespace.prefix)
    connection = await connect_nats(nats_url, name="bot-requests-listener")
    try:
        requests = await connection.client.subscribe(names.bot_requests)
        async with running_table_service(nats_url, nats_namespace.prefix, rules_address) as second:
            host = second.player("host")
            assert (await host.view(table_id, 0)).status == "running"
            asked = await _seat_requests(requests, 3, table_id)
            assert sorted(request.seat for request in asked) == [1, 2, 3]
            lobby = second.parts.app.index
            assert lobby is not None
            summary = lobby.get(table_id)
            assert summary is not None and summary.status == "running" and summary.bot_seats == 3
    finally:
        await connection.close()
