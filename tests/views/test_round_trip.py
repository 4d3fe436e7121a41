"""The typed view holds exactly the engine's observation: every seat's and a spectator's, at
every step of random games of every size, encodes and decodes back to the same dict.

That is what keeps the bots' decisions the same whether they read the wire or play
in-process: they rebuild a state from the decoded dict.
"""

from __future__ import annotations

import json
import random

import pytest
from google.protobuf import json_format

from cardtable.bots.observation import normalise_observation
from cardtable.bots.random_play import random_action, shuffled_deck
from cardtable.engine.game import GameState
from cardtable.engine.registry import DEFINITIONS, GAMES, game_spec
from cardtable.rules_service.codec import to_struct
from cardtable.views.decode import decode_view
from cardtable.views.encode import encode_view
from cardtable.views.names import PHASES
from cardtable_api.common.v1 import views_pb2

TABLE_SIZES = [
    (name, players)
    for name, spec in sorted(GAMES.items())
    for players in range(spec.min_players, spec.max_players + 1)
]
GAMES_PER_SIZE = 2


def _check_every_viewer(state: GameState) -> None:
    for seat in [None, *range(state.num_players)]:
        observation = state.observation(seat)
        view = encode_view(observation)
        wire = views_pb2.SeatView.FromString(view.SerializeToString())
        assert decode_view(wire) == observation


@pytest.mark.parametrize(("name", "players"), TABLE_SIZES)
def test_every_observation_survives_the_wire(name: str, players: int) -> None:
    rng = random.Random(f"views-{name}-{players}")
    options = {"quick": True} if name == "hearts" else {}
    for _ in range(GAMES_PER_SIZE):
        state = game_spec(name).new_game(players, options, first_dealer=rng.randrange(players))
        _check_every_viewer(state)
        while not state.is_over():
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
            else:
                seat = rng.choice(state.to_act())
                state.apply(seat, random_action(state, seat, rng))
            _check_every_viewer(state)


def test_a_spectator_has_no_seat_and_no_hand() -> None:
    state = game_spec("hearts").new_game(4, {}, first_dealer=0)
    state.deal(shuffled_deck(state, random.Random(1)))
    view = encode_view(state.observation(None))
    assert not view.HasField("seat")
    assert list(view.hand) == []
    assert list(view.hand_sizes) == [13, 13, 13, 13]
    assert view.WhichOneof("details") == "hearts"


def test_every_phase_has_an_enum_value() -> None:
    phases = {phase.value for game in DEFINITIONS.values() for phase in game.phases}
    assert phases == set(PHASES)
    assert views_pb2.PHASE_UNSPECIFIED not in PHASES.values()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_bots_read_the_same_dict_as_from_the_struct(name: str) -> None:
    """What the bot service gave its strategies before (the Struct view, normalised) and now
    (the typed view, decoded) are the same dict, types included: same decisions."""
    spec = game_spec(name)
    rng = random.Random(f"bots-{name}")
    state = spec.new_game(spec.max_players, {}, first_dealer=0)
    compared = 0
    while not state.is_over() and compared < 60:
        if state.needs_deal():
            state.deal(shuffled_deck(state, rng))
            continue
        seat = rng.choice(state.to_act())
        observation = state.observation(seat)
        before = normalise_observation(json_format.MessageToDict(to_struct(observation)))
        now = decode_view(
            views_pb2.SeatView.FromString(encode_view(observation).SerializeToString())
        )
        assert json.dumps(now, sort_keys=True) == json.dumps(before, sort_keys=True)
        compared += 1
        state.apply(seat, random_action(state, seat, rng))
    assert compared >= 10
