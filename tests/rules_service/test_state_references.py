"""States by reference: the same game as by snapshot, and no reference ever reaches a state it
was not made for (forged, stale, another table's, another replica's)."""

from __future__ import annotations

import random
import secrets
from collections.abc import AsyncIterator

import grpc
import pytest

from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.platform.grpc_server import RunningServer, start_server
from cardtable.platform.settings import SettingsError
from cardtable.rules_service import codec
from cardtable.rules_service.main import rules_service
from cardtable.rules_service.servicer import apply_action, deal, get_view, new_game
from cardtable.rules_service.settings import RulesSettings
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc
from tests.rules_service.legal_play import random_legal_action

GAMES = [("hearts", 4), ("whist", 5), ("belote", 4), ("358", 3)]
TABLE, OTHER_TABLE = "table-a", "table-b"


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> codec.StateMemo:
    memo = codec.StateMemo()
    monkeypatch.setattr(codec, "MEMO", memo)
    return memo


def _deck(game: str, players: int, rng: random.Random) -> list[str]:
    deck = list(new_game(rules_pb2.NewGameRequest(game=game, players=players)).deck)
    rng.shuffle(deck)
    return deck


def _started(
    game: str, players: int, seed: int, *, by_reference: bool, scope: str = TABLE, encoding: int = 0
) -> rules_pb2.DealResponse:
    created = new_game(
        rules_pb2.NewGameRequest(game=game, players=players, encoding=encoding)  # type: ignore[arg-type]
    )
    created.state.scope = scope
    order = _deck(game, players, random.Random(seed))
    return deal(
        rules_pb2.DealRequest(state=created.state, deck_order=order, by_reference=by_reference)
    )


def _play(
    game: str,
    players: int,
    seed: int,
    *,
    by_reference: bool,
    encoding: int = 0,
    snapshots: list[rules_pb2.GameState] | None = None,
) -> list[object]:
    """A whole game, every answer recorded but the state's own encoding (each state answered
    goes to ``snapshots`` when given)."""
    rng = random.Random(seed)
    dealt = _started(game, players, seed, by_reference=by_reference, encoding=encoding)
    state, status = dealt.state, dealt.status
    record: list[object] = [status, list(dealt.facts)]
    while not status.over:
        if status.needs_deal:
            order = _deck(game, players, rng)
            again = deal(
                rules_pb2.DealRequest(state=state, deck_order=order, by_reference=by_reference)
            )
            state, status = again.state, again.status
            record += [status, list(again.facts)]
            continue
        seat = status.to_act[0]
        view = get_view(rules_pb2.GetViewRequest(state=state, seat=seat, typed_view=True))
        applied = apply_action(
            rules_pb2.ApplyActionRequest(
                state=state,
                seat=seat,
                action=random_legal_action(state, seat, rng),
                include_views_of_seats_to_act=True,
                typed_views=True,
                by_reference=by_reference,
            )
        )
        if by_reference and not applied.status.over:
            assert applied.state.snapshot == b"" and len(applied.state.reference) == 16
            assert applied.state.scope == TABLE
        state, status = applied.state, applied.status
        if snapshots is not None:
            snapshots.append(state)
        record += [view.seat_view, status, list(applied.facts), list(applied.views_of_seats_to_act)]
    assert state.snapshot, "a finished game is answered by its snapshot: it is not kept"
    record.append(get_view(rules_pb2.GetViewRequest(state=state, typed_view=True)).seat_view)
    return record


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_game_played_by_reference_is_the_game_played_by_snapshot(
    game: str, players: int, fresh_memo: codec.StateMemo
) -> None:
    by_snapshot = _play(game, players, 41, by_reference=False)
    by_reference = _play(game, players, 41, by_reference=True)
    assert by_reference == by_snapshot
    assert len(fresh_memo) <= 2  # the game over, nothing of it stays but a starting snapshot


def test_a_forged_reference_is_not_found_and_changes_nothing(fresh_memo: codec.StateMemo) -> None:
    real = _started("hearts", 4, 1, by_reference=True).state
    held = len(fresh_memo)
    forged = rules_pb2.GameState()
    forged.CopyFrom(real)
    forged.reference = secrets.token_bytes(16)
    with pytest.raises(codec.StateNotFoundError):
        get_view(rules_pb2.GetViewRequest(state=forged, seat=0))
    with pytest.raises(codec.StateNotFoundError):
        apply_action(rules_pb2.ApplyActionRequest(state=forged, seat=0, action="play 2C"))
    assert len(fresh_memo) == held
    assert get_view(rules_pb2.GetViewRequest(state=real, seat=0)).status.to_act


def test_a_reference_moved_past_is_not_found_while_the_new_one_works() -> None:
    rng = random.Random(2)
    dealt = _started("hearts", 4, 2, by_reference=True)
    seat = dealt.status.to_act[0]
    request = rules_pb2.ApplyActionRequest(
        state=dealt.state,
        seat=seat,
        action=random_legal_action(dealt.state, seat, rng),
        by_reference=True,
    )
    moved = apply_action(request)
    with pytest.raises(codec.StateNotFoundError):
        apply_action(request)  # the same move again, on the state it already changed
    with pytest.raises(codec.StateNotFoundError):
        get_view(rules_pb2.GetViewRequest(state=dealt.state, seat=seat))
    assert moved.state.reference != dealt.state.reference
    view = get_view(rules_pb2.GetViewRequest(state=moved.state, seat=seat, typed_view=True))
    assert view.status == moved.status


def test_a_reference_is_honoured_only_for_the_scope_it_was_made_for() -> None:
    """Table B's request carrying table A's reference (a mix-up, or a guess) never touches
    A's state: refused, and A's reference still works for A."""
    a = _started("hearts", 4, 3, by_reference=True, scope=TABLE)
    misused = rules_pb2.GameState()
    misused.CopyFrom(a.state)
    misused.scope = OTHER_TABLE
    seat = a.status.to_act[0]
    action = random_legal_action(a.state, seat, random.Random(3))
    with pytest.raises(codec.StateNotFoundError):
        apply_action(rules_pb2.ApplyActionRequest(state=misused, seat=seat, action=action))
    with pytest.raises(codec.StateNotFoundError):
        get_view(rules_pb2.GetViewRequest(state=misused, seat=seat))
    applied = apply_action(
        rules_pb2.ApplyActionRequest(state=a.state, seat=seat, action=action, by_reference=True)
    )
    assert applied.state.scope == TABLE


def test_a_reference_of_another_game_is_not_found_and_stays_with_its_own() -> None:
    hearts = _started("hearts", 4, 4, by_reference=True)
    as_whist = rules_pb2.GameState()
    as_whist.CopyFrom(hearts.state)
    as_whist.game = "whist"
    with pytest.raises(codec.StateNotFoundError):
        apply_action(rules_pb2.ApplyActionRequest(state=as_whist, seat=0, action="bid 1"))
    assert get_view(rules_pb2.GetViewRequest(state=hearts.state, seat=0)).status.to_act


@pytest.mark.parametrize("by_reference", [True, False])
def test_a_refused_move_leaves_the_state_where_it_was(
    by_reference: bool, fresh_memo: codec.StateMemo
) -> None:
    """A player's illegal move must not cost the table a rebuild (nor a parse of its snapshot):
    the state is remembered again, unchanged, under the same key."""
    dealt = _started("whist", 4, 5, by_reference=by_reference)
    seat = dealt.status.to_act[0]
    other = (seat + 1) % 4
    for refused in (
        rules_pb2.ApplyActionRequest(state=dealt.state, seat=other, action="bid 0"),
        rules_pb2.ApplyActionRequest(state=dealt.state, seat=9, action="bid 0"),
        rules_pb2.ApplyActionRequest(state=dealt.state, seat=seat, action="fly away"),
    ):
        with pytest.raises((IllegalAction, InvalidInput)):
            apply_action(refused)
    remembered = (
        fresh_memo.peek_reference(dealt.state.reference, TABLE)
        if by_reference
        else fresh_memo.peek(dealt.state.snapshot)
    )
    assert remembered is not None and remembered.to_act() == (seat,)
    action = random_legal_action(dealt.state, seat, random.Random(5))
    assert apply_action(
        rules_pb2.ApplyActionRequest(state=dealt.state, seat=seat, action=action)
    ).status


def test_malformed_references_are_invalid_input() -> None:
    dealt = _started("hearts", 4, 6, by_reference=True)
    short = rules_pb2.GameState()
    short.CopyFrom(dealt.state)
    short.reference = b"12345"
    both = rules_pb2.GameState()
    both.CopyFrom(dealt.state)
    both.snapshot = b"{}"
    long_scope = rules_pb2.GameState()
    long_scope.CopyFrom(dealt.state)
    long_scope.scope = "x" * (codec.MAX_SCOPE_CHARS + 1)
    for state in (short, both, long_scope):
        with pytest.raises(InvalidInput):
            get_view(rules_pb2.GetViewRequest(state=state, seat=0))


@pytest.fixture
async def rules() -> AsyncIterator[rules_pb2_grpc.RulesServiceStub]:
    running: RunningServer = await start_server([rules_service()], port=0, host="127.0.0.1")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield rules_pb2_grpc.RulesServiceStub(channel)
    finally:
        await running.stop(None)


async def test_an_unknown_reference_is_not_found_unary_and_pipelined(
    rules: rules_pb2_grpc.RulesServiceStub,
) -> None:
    created = await rules.NewGame(rules_pb2.NewGameRequest(game="hearts", players=4))
    created.state.scope = TABLE
    order = _deck("hearts", 4, random.Random(7))
    dealt = await rules.Deal(
        rules_pb2.DealRequest(state=created.state, deck_order=order, by_reference=True)
    )
    assert dealt.state.reference and not dealt.state.snapshot
    unknown = rules_pb2.GameState()
    unknown.CopyFrom(dealt.state)
    unknown.reference = secrets.token_bytes(16)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await rules.GetView(rules_pb2.GetViewRequest(state=unknown, seat=0))
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert "send the snapshot or rebuild" in (refused.value.details() or "")

    stream = rules.Pipeline()
    await stream.write(
        rules_pb2.PipelineRequest(
            calls=[
                rules_pb2.PipelinedCall(
                    id=1, get_view=rules_pb2.GetViewRequest(state=unknown, seat=0)
                ),
                rules_pb2.PipelinedCall(
                    id=2, get_view=rules_pb2.GetViewRequest(state=dealt.state, seat=0)
                ),
            ]
        )
    )
    reply = await stream.read()
    await stream.done_writing()
    assert reply.replies[0].failed.code == grpc.StatusCode.NOT_FOUND.value[0]
    assert reply.replies[1].get_view.status.to_act


def test_options_are_kept_by_reference_as_by_snapshot() -> None:
    """A quick game (one deal) ends after its deal by reference too."""
    created = new_game(
        rules_pb2.NewGameRequest(
            game="hearts", players=4, options=common_pb2.GameOptions(values={"quick": "true"})
        )
    )
    created.state.scope = TABLE
    order = _deck("hearts", 4, random.Random(8))
    dealt = deal(rules_pb2.DealRequest(state=created.state, deck_order=order, by_reference=True))
    remembered = codec.MEMO.peek_reference(dealt.state.reference, TABLE)
    assert remembered is not None
    assert (
        remembered.to_snapshot()
        == codec.decode_state(
            deal(rules_pb2.DealRequest(state=created.state, deck_order=order)).state
        ).to_snapshot()
    )


async def test_the_memo_size_is_a_setting_and_its_figures_are_scraped() -> None:
    """As operators run it: ``RULES_STATE_MEMO_SIZE`` bounds the states held, and the metrics
    say how many are held, how many were evicted and how many references were not found."""
    from cardtable_tools.bench.scrape import sample_sum, scrape_metrics
    from cardtable_tools.stack.processes import start

    service = await start("rules", {"RULES_STATE_MEMO_SIZE": "2"})
    try:
        async with grpc.aio.insecure_channel(service.address) as channel:
            rules = rules_pb2_grpc.RulesServiceStub(channel)
            dealt = []
            for table in range(3):
                created = await rules.NewGame(rules_pb2.NewGameRequest(game="hearts", players=4))
                created.state.scope = f"table-{table}"
                order = _deck("hearts", 4, random.Random(table))
                request = rules_pb2.DealRequest(
                    state=created.state, deck_order=order, by_reference=True
                )
                dealt.append(await rules.Deal(request))
            with pytest.raises(grpc.aio.AioRpcError) as evicted:
                await rules.GetView(rules_pb2.GetViewRequest(state=dealt[0].state, seat=0))
            assert evicted.value.code() == grpc.StatusCode.NOT_FOUND
            assert (await rules.GetView(rules_pb2.GetViewRequest(state=dealt[2].state))).status
        text = await scrape_metrics(service.metrics_port)
        assert sample_sum(text, "rules_states_held") == 2
        assert sample_sum(text, "rules_states_evicted_total") >= 1
        assert sample_sum(text, "rules_state_references_not_found_total") == 1
    finally:
        assert service.terminate() == 0


def test_a_memo_size_out_of_bounds_is_refused_at_start() -> None:
    with pytest.raises(SettingsError, match="RULES_STATE_MEMO_SIZE=0"):
        RulesSettings.from_env({"RULES_STATE_MEMO_SIZE": "0"})
