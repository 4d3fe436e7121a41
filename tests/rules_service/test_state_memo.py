"""The rules service's memo of checked states: shared for reading, taken for changing.

Several tables are played at once through the servicer's functions, as the table service
calls them: a view and the legal actions of the state it holds, then the move. The memo must
never hand out a state that differs from its snapshot, and must not keep the states a table
has moved past.
"""

from __future__ import annotations

import json
import random

import pytest

from cardtable.rules_service import codec
from cardtable.rules_service.servicer import apply_action, deal, get_view, new_game
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2
from tests.rules_service.legal_play import random_legal_action

GAMES = [("hearts", 4), ("whist", 4), ("belote", 4), ("358", 3)]


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> codec.StateMemo:
    memo = codec.StateMemo()
    monkeypatch.setattr(codec, "MEMO", memo)
    return memo


def _remembered_as_sent(memo: codec.StateMemo, message: rules_pb2.GameState) -> None:
    """The memo's state for ``message`` encodes to exactly its snapshot."""
    state = memo.peek(message.snapshot)
    assert state is not None
    assert json.dumps(state.to_snapshot(), separators=(",", ":")).encode() == message.snapshot


def _started(game: str, players: int, rng: random.Random) -> rules_pb2.GameState:
    created = new_game(rules_pb2.NewGameRequest(game=game, players=players))
    deck = list(created.deck)
    rng.shuffle(deck)
    return deal(rules_pb2.DealRequest(state=created.state, deck_order=deck)).state


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_shared_states_stay_as_their_snapshots_say(
    game: str, players: int, fresh_memo: codec.StateMemo
) -> None:
    rng = random.Random(7)
    tables = [_started(game, players, rng) for _ in range(3)]
    statuses = [get_view(rules_pb2.GetViewRequest(state=state, seat=0)).status for state in tables]
    for _ in range(60):
        index = rng.randrange(len(tables))
        state, status = tables[index], statuses[index]
        if status.over:
            continue
        if status.needs_deal:
            created = new_game(rules_pb2.NewGameRequest(game=game, players=players))
            deck = list(created.deck)
            rng.shuffle(deck)
            dealt = deal(rules_pb2.DealRequest(state=state, deck_order=deck))
            tables[index], statuses[index] = dealt.state, dealt.status
            continue
        seat = status.to_act[0]
        get_view(rules_pb2.GetViewRequest(state=state, seat=seat))
        action = random_legal_action(state, seat, rng)
        _remembered_as_sent(fresh_memo, state)  # reading it changed nothing
        applied = apply_action(
            rules_pb2.ApplyActionRequest(
                state=state, seat=seat, action=action, include_views_of_seats_to_act=True
            )
        )
        # The move took the old state out, and the new one is remembered as it was sent.
        assert fresh_memo.peek(state.snapshot) is None
        _remembered_as_sent(fresh_memo, applied.state)
        tables[index], statuses[index] = applied.state, applied.status
    # About one state per table in play (new games share their starting snapshot).
    assert len(fresh_memo) <= len(tables) + 2


def test_a_state_moved_past_is_checked_in_full_when_sent_again(
    fresh_memo: codec.StateMemo,
) -> None:
    """A second replica (or a retry) may send a snapshot the memo gave away: still correct."""
    rng = random.Random(3)
    state = _started("hearts", 4, rng)
    status = get_view(rules_pb2.GetViewRequest(state=state, seat=0)).status
    seat = status.to_act[0]
    action = random_legal_action(state, seat, rng)
    request = rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action)
    first = apply_action(request)
    assert fresh_memo.peek(state.snapshot) is None
    again = apply_action(request)
    assert again.state.snapshot == first.state.snapshot
    assert again.status == first.status


def test_an_illegal_action_leaves_the_snapshot_usable(fresh_memo: codec.StateMemo) -> None:
    rng = random.Random(5)
    state = _started("whist", 4, rng)
    status = get_view(rules_pb2.GetViewRequest(state=state, seat=0)).status
    seat = status.to_act[0]
    other = (seat + 1) % 4
    with pytest.raises(Exception, match="turn"):
        apply_action(rules_pb2.ApplyActionRequest(state=state, seat=other, action="bid 0"))
    action = random_legal_action(state, seat, rng)
    applied = apply_action(rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action))
    _remembered_as_sent(fresh_memo, applied.state)


def test_the_memo_keeps_at_most_its_size() -> None:
    memo = codec.StateMemo(size=2)
    states = [
        codec.decode_state(
            new_game(
                rules_pb2.NewGameRequest(
                    game="hearts",
                    players=4,
                    first_dealer=dealer,
                    options=common_pb2.GameOptions(),
                )
            ).state
        )
        for dealer in range(3)
    ]
    for number, state in enumerate(states):
        memo.put(f"snapshot {number}".encode(), state)
    assert len(memo) == 2
    assert memo.peek(b"snapshot 0") is None
    assert memo.peek(b"snapshot 2") is states[2]
    assert memo.take(b"snapshot 2") is states[2] and memo.peek(b"snapshot 2") is None


def test_a_finished_game_is_not_remembered(fresh_memo: codec.StateMemo) -> None:
    """No move follows a game's last state: the memo holds only games in play."""
    rng = random.Random(11)
    created = new_game(
        rules_pb2.NewGameRequest(
            game="hearts", players=4, options=common_pb2.GameOptions(values={"quick": "true"})
        )
    )
    deck = list(created.deck)
    rng.shuffle(deck)
    state = deal(rules_pb2.DealRequest(state=created.state, deck_order=deck)).state
    status = get_view(rules_pb2.GetViewRequest(state=state, seat=0)).status
    while not status.over:
        seat = status.to_act[0]
        applied = apply_action(
            rules_pb2.ApplyActionRequest(
                state=state, seat=seat, action=random_legal_action(state, seat, rng)
            )
        )
        state, status = applied.state, applied.status
        if not status.over:
            _remembered_as_sent(fresh_memo, state)
    assert fresh_memo.peek(state.snapshot) is None
    assert len(fresh_memo) == 0
    # Its final view is still answered, from the snapshot checked in full, and not kept.
    final = get_view(rules_pb2.GetViewRequest(state=state, seat=0))
    assert final.status.over
    assert len(fresh_memo) == 0
