"""The rules service gives a status's phase as an enum, and as the text older clients read."""

from __future__ import annotations

import random

import pytest

from cardtable.rules_service.servicer import apply_action, deal, new_game
from cardtable.views.names import STATUS_PHASES
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2
from tests.rules_service.legal_play import random_legal_action

GAMES = [("hearts", 4), ("whist", 3), ("belote", 4), ("358", 3)]


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_every_status_of_a_game_has_its_phase_as_enum_and_as_text(game: str, players: int) -> None:
    rng = random.Random(11)
    options = common_pb2.GameOptions(values={"quick": "true"} if game == "hearts" else {})
    created = new_game(rules_pb2.NewGameRequest(game=game, players=players, options=options))
    state, status = created.state, created.status
    seen = [status]
    while not status.over and len(seen) < 400:
        if status.needs_deal:
            deck = list(new_game(rules_pb2.NewGameRequest(game=game, players=players)).deck)
            rng.shuffle(deck)
            reply = deal(rules_pb2.DealRequest(state=state, deck_order=deck))
        else:
            seat = status.to_act[0]
            request = rules_pb2.ApplyActionRequest(
                state=state, seat=seat, action=random_legal_action(state, seat, rng)
            )
            reply = apply_action(request)
        state, status = reply.state, reply.status
        seen.append(status)

    assert {common_pb2.GameStatus.PHASE_DEAL, common_pb2.GameStatus.PHASE_PLAY} <= {
        status.current_phase for status in seen
    }
    assert all(status.current_phase == STATUS_PHASES[status.phase] for status in seen)
