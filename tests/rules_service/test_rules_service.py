"""The rules service in-process on a free port, driven over a real gRPC channel only."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.rules_service.main import rules_service
from cardtable.rules_service.servicer import (
    DeadlineExceededError,
    deadline_check,
    new_game,
    rebuild_state,
)
from cardtable.views.decode import decode_view
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    running = await start_server([rules_service()], port=0, host="127.0.0.1")
    yield running
    await running.stop(None)


@pytest.fixture
async def rules(server: RunningServer) -> AsyncIterator[rules_pb2_grpc.RulesServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield rules_pb2_grpc.RulesServiceStub(channel)


async def _new_dealt_game(
    rules: rules_pb2_grpc.RulesServiceStub, game: str, players: int, seed: int, **options: str
) -> rules_pb2.DealResponse:
    rng = random.Random(seed)
    created = await rules.NewGame(
        rules_pb2.NewGameRequest(
            game=game,
            players=players,
            options=common_pb2.GameOptions(values=options),
            first_dealer=rng.randrange(players),
        )
    )
    deck = list(created.deck)
    rng.shuffle(deck)
    return await rules.Deal(rules_pb2.DealRequest(state=created.state, deck_order=deck))


async def _play_one_deal(
    rules: rules_pb2_grpc.RulesServiceStub, dealt: rules_pb2.DealResponse, seed: int
) -> tuple[rules_pb2.ApplyActionResponse, list[rules_pb2.Fact]]:
    rng = random.Random(seed)
    state, status = dealt.state, dealt.status
    facts: list[rules_pb2.Fact] = list(dealt.facts)
    last = None
    while not status.needs_deal and not status.over:
        seat = rng.choice(list(status.to_act))
        legal = await rules.LegalActions(rules_pb2.LegalActionsRequest(state=state, seat=seat))
        if legal.HasField("choose_cards"):
            cards = rng.sample(list(legal.choose_cards.cards), legal.choose_cards.count)
            action = " ".join([legal.choose_cards.verb, *cards])
        else:
            action = rng.choice(list(legal.actions))
        last = await rules.ApplyAction(
            rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action)
        )
        state, status = last.state, last.status
        facts.extend(last.facts)
    assert last is not None
    return last, facts


async def test_health_is_serving(server: RunningServer) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", "cardtable.rules.v1.RulesService"):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_list_games(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    reply = await rules.ListGames(rules_pb2.ListGamesRequest())
    games = {game.name: game for game in reply.games}
    assert {"hearts", "whist"} <= set(games)
    assert games["hearts"].lower_is_better
    assert [option.name for option in games["hearts"].options] == ["quick"]
    assert (games["whist"].min_players, games["whist"].max_players) == (3, 6)


async def test_whole_hearts_deal_through_grpc(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    dealt = await _new_dealt_game(rules, "hearts", 4, seed=3, quick="true")
    dealt_facts = [fact for fact in dealt.facts if fact.kind == "CardsDealt"]
    assert len(dealt_facts) == 4
    for fact in dealt_facts:
        assert fact.audience.kind == common_pb2.Audience.KIND_SEATS
        assert list(fact.audience.seats) == [int(fact.fields["seat"])]
    last, facts = await _play_one_deal(rules, dealt, seed=3)
    assert last.status.over
    scored = [fact for fact in facts if fact.kind == "DealScored"]
    assert len(scored) == 1
    assert sum(scored[0].fields["scores"]) in (26, 78)
    assert sum(1 for fact in facts if fact.kind == "TrickWon") == 13
    assert list(last.status.totals) == [int(score) for score in scored[0].fields["scores"]]
    assert len(last.status.places) == 4


async def test_whole_belote_deal_through_grpc(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    games = {game.name for game in (await rules.ListGames(rules_pb2.ListGamesRequest())).games}
    if "belote" not in games:
        pytest.fail("belote must be served by the rules service")
    for seed in range(10):  # a deal may be thrown in when everyone passes twice
        dealt = await _new_dealt_game(rules, "belote", 4, seed=seed)
        last, facts = await _play_one_deal(rules, dealt, seed=seed)
        if any(fact.kind == "DealScored" for fact in facts):
            break
    tricks = [fact for fact in facts if fact.kind == "TrickWon"]
    assert len(tricks) == 8
    assert last.status.deal_number == 1


async def test_passed_cards_are_private(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    dealt = await _new_dealt_game(rules, "hearts", 4, seed=4, quick="true")
    legal = await rules.LegalActions(rules_pb2.LegalActionsRequest(state=dealt.state, seat=0))
    cards = list(legal.choose_cards.cards)[:3]
    reply = await rules.ApplyAction(
        rules_pb2.ApplyActionRequest(state=dealt.state, seat=0, action="pass " + " ".join(cards))
    )
    assert reply.action_audience.kind == common_pb2.Audience.KIND_SEATS
    assert list(reply.action_audience.seats) == [0]
    view = await rules.GetView(rules_pb2.GetViewRequest(state=reply.state, seat=1, typed_view=True))
    assert len(view.seat_view.hand) == 13
    assert not set(cards) & set(view.seat_view.hand)
    assert not set(cards) & set(view.seat_view.hearts.passed)
    spectator = await rules.GetView(rules_pb2.GetViewRequest(state=reply.state, typed_view=True))
    assert list(spectator.seat_view.hand) == []
    assert not spectator.seat_view.HasField("seat")


async def test_a_caller_older_than_the_typed_view_still_gets_the_struct(
    rules: rules_pb2_grpc.RulesServiceStub,
) -> None:
    """A table replica that does not know ``typed_view`` (a rollout in progress) reads the
    Struct; one that asks for the typed view gets only that."""
    dealt = await _new_dealt_game(rules, "whist", 4, seed=6)
    old = await rules.GetView(rules_pb2.GetViewRequest(state=dealt.state, seat=1))
    new = await rules.GetView(rules_pb2.GetViewRequest(state=dealt.state, seat=1, typed_view=True))
    assert not old.HasField("seat_view") and not new.HasField("view")
    # The same facts either way (a Struct's numbers are floats, equal to the ints).
    assert decode_view(new.seat_view) == json_format.MessageToDict(old.view)
    assert new.seat_view.whist.cards_each == 1


async def test_illegal_move_is_failed_precondition_with_engine_message(
    rules: rules_pb2_grpc.RulesServiceStub,
) -> None:
    dealt = await _new_dealt_game(rules, "hearts", 4, seed=5, quick="true")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await rules.ApplyAction(
            rules_pb2.ApplyActionRequest(state=dealt.state, seat=0, action="play 2C")
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert caught.value.details() == "it is time to pass three cards left"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda request: setattr(request, "action", "play ZZ"), "unknown card"),
        (lambda request: setattr(request, "action", "x" * 5000), "at most"),
        (lambda request: setattr(request.state, "game", "poker"), "unknown game"),
        (lambda request: setattr(request.state, "snapshot", b"{not json"), "not valid JSON"),
        (lambda request: setattr(request.state, "snapshot", b"1" * 5000), "not valid JSON"),
        (lambda request: setattr(request, "seat", 9), "there is no seat 9"),
        (lambda request: setattr(request.state, "snapshot_version", 9), "not supported"),
        (lambda request: setattr(request.state, "snapshot", b"x" * 300_000), "larger than"),
    ],
)
async def test_malformed_requests_are_invalid_argument(
    rules: rules_pb2_grpc.RulesServiceStub, mutate: object, message: str
) -> None:
    dealt = await _new_dealt_game(rules, "hearts", 4, seed=6, quick="true")
    request = rules_pb2.ApplyActionRequest(state=dealt.state, seat=0, action="pass 2C 3C 4C")
    mutate(request)  # type: ignore[operator]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await rules.ApplyAction(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (caught.value.details() or "")


async def test_tampered_state_is_invalid_argument(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    dealt = await _new_dealt_game(rules, "hearts", 4, seed=7, quick="true")
    snapshot = json.loads(dealt.state.snapshot)
    snapshot["state"]["hands"][0][0] = snapshot["state"]["hands"][1][0]
    state = rules_pb2.GameState(
        game="hearts", snapshot_version=1, snapshot=json.dumps(snapshot).encode()
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await rules.GetView(rules_pb2.GetViewRequest(state=state, seat=0))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "inconsistent" in (caught.value.details() or "")


async def test_new_game_bad_players_and_options(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    for request in (
        rules_pb2.NewGameRequest(game="hearts", players=5),
        rules_pb2.NewGameRequest(
            game="hearts", players=4, options=common_pb2.GameOptions(values={"x": "1"})
        ),
        rules_pb2.NewGameRequest(game="hearts", players=4, first_dealer=9),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await rules.NewGame(request)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_rebuild_reproduces_the_state(rules: rules_pb2_grpc.RulesServiceStub) -> None:
    rng = random.Random(8)
    created = await rules.NewGame(rules_pb2.NewGameRequest(game="whist", players=3, first_dealer=1))
    deck = list(created.deck)
    rng.shuffle(deck)
    inputs = [rules_pb2.GameInput(deal=rules_pb2.DeckOrder(cards=deck))]
    reply = await rules.Deal(rules_pb2.DealRequest(state=created.state, deck_order=deck))
    state, status = reply.state, reply.status
    for _ in range(3):
        seat = status.to_act[0]
        legal = await rules.LegalActions(rules_pb2.LegalActionsRequest(state=state, seat=seat))
        action = legal.actions[0]
        inputs.append(rules_pb2.GameInput(action=rules_pb2.SeatAction(seat=seat, action=action)))
        applied = await rules.ApplyAction(
            rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action)
        )
        state, status = applied.state, applied.status
    rebuilt = await rules.Rebuild(
        rules_pb2.RebuildRequest(game="whist", players=3, first_dealer=1, inputs=inputs)
    )
    assert json.loads(rebuilt.state.snapshot) == json.loads(state.snapshot)
    assert rebuilt.status == status


def test_rebuild_stops_once_the_deadline_has_passed() -> None:
    class ExpiredContext:
        def time_remaining(self) -> float:
            return 0.0

    created = new_game(rules_pb2.NewGameRequest(game="hearts", players=4))
    request = rules_pb2.RebuildRequest(
        game="hearts",
        players=4,
        inputs=[rules_pb2.GameInput(deal=rules_pb2.DeckOrder(cards=list(created.deck)))],
    )
    with pytest.raises(DeadlineExceededError):
        rebuild_state(request, deadline_check(ExpiredContext()))  # type: ignore[arg-type]


@pytest.mark.services
async def test_rules_process_reflection_and_graceful_sigterm() -> None:
    """As operators run it: its own process, reflection for grpcurl, clean exit on SIGTERM."""
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from cardtable_tools.stack.processes import start

    service = await start("rules", {})
    try:
        async with grpc.aio.insecure_channel(service.address) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            async for reply in stub.ServerReflectionInfo(iter([request])):
                names = {item.name for item in reply.list_services_response.service}
                break
            assert "cardtable.rules.v1.RulesService" in names
            assert "grpc.health.v1.Health" in names
            rules = rules_pb2_grpc.RulesServiceStub(channel)
            reply = await rules.ListGames(rules_pb2.ListGamesRequest(), timeout=5)
            assert len(reply.games) == 4
    finally:
        assert service.terminate() == 0


@pytest.mark.parametrize(("game", "players"), [("hearts", 4), ("whist", 4), ("358", 3)])
async def test_views_that_come_with_a_move_are_the_views_get_view_gives(
    rules: rules_pb2_grpc.RulesServiceStub, game: str, players: int
) -> None:
    rng = random.Random(f"views-{game}")
    dealt = await _new_dealt_game(rules, game, players, seed=11)
    state, status = dealt.state, dealt.status
    compared = 0
    for _ in range(40):
        if status.needs_deal or status.over:
            break
        seat = rng.choice(list(status.to_act))
        legal = await rules.LegalActions(rules_pb2.LegalActionsRequest(state=state, seat=seat))
        if legal.HasField("choose_cards"):
            cards = rng.sample(list(legal.choose_cards.cards), legal.choose_cards.count)
            action = " ".join([legal.choose_cards.verb, *cards])
        else:
            action = rng.choice(list(legal.actions))
        plain = await rules.ApplyAction(
            rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action)
        )
        assert not plain.views_of_seats_to_act  # only when asked for
        reply = await rules.ApplyAction(
            rules_pb2.ApplyActionRequest(
                state=state,
                seat=seat,
                action=action,
                include_views_of_seats_to_act=True,
                typed_views=True,
            )
        )
        assert [view.seat for view in reply.views_of_seats_to_act] == list(reply.status.to_act)
        for view in reply.views_of_seats_to_act:
            expected = await rules.GetView(
                rules_pb2.GetViewRequest(state=reply.state, seat=view.seat, typed_view=True)
            )
            assert view.seat_view == expected.seat_view
            assert view.seat_view.seat == view.seat and not view.HasField("view")
            compared += 1
        state, status = reply.state, reply.status
    assert compared >= players  # the first deal of whist is one card each: short
