"""Hostile requests to the rules service: broken and tampered states, bad games and decks.

The rules service trusts nothing it is sent (the state travels with every call, or a reference
to one it holds), so every call here carries a real state with something broken, a reference
it never made, or a request no game accepts.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from cardtable.rules_service.codec import (
    MAX_REBUILD_INPUTS,
    MAX_SCOPE_CHARS,
    MAX_SNAPSHOT_BYTES,
    REFERENCE_BYTES,
)
from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2
from cardtable_tools.hostile.calls import HostileRequest, Material, rules_call
from cardtable_tools.hostile.garbage import broken_snapshot, tampered_snapshot
from cardtable_tools.hostile.rules_states import RealState

STATE_METHODS = ("Deal", "ApplyAction", "LegalActions", "GetView")


def _with_state(method: str, state: rules_pb2.GameState, real: RealState) -> object:
    """The request of ``method`` carrying ``state``, otherwise as a correct caller sends it."""
    seat = real.to_act[0] if real.to_act else 0
    if method == "Deal":
        return rules_pb2.DealRequest(state=state, deck_order=list(real.deck))
    if method == "ApplyAction":
        return rules_pb2.ApplyActionRequest(state=state, seat=seat, action=real.action or "pass")
    if method == "LegalActions":
        return rules_pb2.LegalActionsRequest(state=state, seat=seat)
    return rules_pb2.GetViewRequest(state=state, seat=seat, typed_view=True)


async def garbage_snapshot(material: Material) -> HostileRequest:
    rng = material.rng
    real = rng.choice(material.states)
    state = rules_pb2.GameState()
    state.CopyFrom(real.state)
    shape = rng.randrange(10)
    if shape == 0:
        state.snapshot_version = rng.choice([0, 2, 99, 2**32 - 1])
    elif shape == 1:
        state.game = rng.choice(["", "poker", "HEARTS!", "\u2603"])
    elif shape == 2:
        state.snapshot = rng.randbytes(MAX_SNAPSHOT_BYTES + rng.randrange(1, 1000))
    else:
        state.snapshot = broken_snapshot(real.state.snapshot, rng)
    method = rng.choice(STATE_METHODS)
    return rules_call("garbage_snapshot", method, _with_state(method, state, real))  # type: ignore[arg-type]


async def tampered(material: Material) -> HostileRequest:
    rng = material.rng
    real = rng.choice(material.states)
    state = rules_pb2.GameState()
    state.CopyFrom(real.state)
    state.snapshot = tampered_snapshot(real.state.snapshot, rng)
    method = rng.choice(STATE_METHODS)
    request = _with_state(method, state, real)
    return rules_call("tampered_snapshot", method, request)  # type: ignore[arg-type]


async def forged_reference(material: Material) -> HostileRequest:
    """A state given by a reference this replica never made, or a malformed one: a guess at
    another table's state must find nothing (rules.proto, GameState)."""
    rng = material.rng
    real = rng.choice(material.states)
    state = rules_pb2.GameState(game=real.state.game, snapshot_version=real.state.snapshot_version)
    state.scope = rng.choice(["", "a-table", "x" * (MAX_SCOPE_CHARS + 1)])
    shape = rng.randrange(4)
    if shape == 0:
        state.reference = rng.randbytes(rng.choice([1, 15, 17, 64]))
    elif shape == 1:
        state.reference, state.snapshot = rng.randbytes(REFERENCE_BYTES), real.state.snapshot
    else:
        state.reference = rng.randbytes(REFERENCE_BYTES)
    method = rng.choice(STATE_METHODS)
    return rules_call("forged_reference", method, _with_state(method, state, real))  # type: ignore[arg-type]


def _bad_new_game(rng: random.Random) -> rules_pb2.NewGameRequest:
    shape = rng.randrange(4)
    if shape == 0:
        return rules_pb2.NewGameRequest(game=rng.choice(["", "poker", "x" * 500]), players=4)
    if shape == 1:
        game, players = rng.choice([("hearts", 3), ("358", 0), ("whist", 7), ("belote", 2**32 - 1)])
        return rules_pb2.NewGameRequest(game=game, players=players)
    if shape == 2:
        return rules_pb2.NewGameRequest(
            game="hearts",
            players=4,
            options=common_pb2.GameOptions(values={rng.choice(["quick", "nope"]): "perhaps"}),
        )
    return rules_pb2.NewGameRequest(
        game="belote", players=4, first_dealer=rng.choice([4, 99, 2**32 - 1])
    )


def _bad_deck(real: RealState, rng: random.Random) -> list[str]:
    deck = list(real.deck)
    shapes = [
        deck[:-1],
        [*deck[:-1], deck[0]],
        [*deck, "AS"][:53] if len(deck) < 53 else deck[:53],
        ["ZZ", *deck[1:]],
        [rng.choice(["", "1H", "11C", "AX", "\u2660A"]) for _ in deck],
        deck * 2,
    ]
    return rng.choice(shapes)


async def rules_malformed(material: Material) -> HostileRequest:
    rng = material.rng
    real = rng.choice(material.states)
    fresh = [state for state in material.states if not state.to_act and not state.action]
    kind = "rules_malformed"
    choices: list[Callable[[], HostileRequest]] = [
        lambda: rules_call(kind, "NewGame", _bad_new_game(rng)),
        lambda: rules_call(
            kind,
            "Deal",
            rules_pb2.DealRequest(
                state=(chosen := rng.choice(fresh)).state, deck_order=_bad_deck(chosen, rng)
            ),
        ),
        lambda: rules_call(
            kind,
            "ApplyAction",
            rules_pb2.ApplyActionRequest(
                state=real.state,
                seat=rng.choice([real.players, 2**32 - 1]),
                action=real.action or "pass",
            ),
        ),
        lambda: rules_call(
            kind,
            "ApplyAction",
            rules_pb2.ApplyActionRequest(
                state=real.state,
                seat=real.to_act[0] if real.to_act else 0,
                action=rng.choice(["", "play", "play ZZ", "x" * 65, "bid -1", "bid 99999999999"]),
            ),
        ),
        lambda: rules_call(
            kind,
            "LegalActions",
            rules_pb2.LegalActionsRequest(state=real.state, seat=real.players + rng.randrange(9)),
        ),
        lambda: rules_call(
            kind,
            "GetView",
            rules_pb2.GetViewRequest(
                state=real.state, seat=real.players + rng.randrange(9), typed_view=True
            ),
        ),
        lambda: rules_call(kind, "Rebuild", _bad_rebuild(real, rng)),
        lambda: rules_call(
            kind, "NewGame", rules_pb2.NewGameRequest(game="\u2603" * rng.randrange(1, 300_000))
        ),
    ]
    return rng.choice(choices)()


def _bad_rebuild(real: RealState, rng: random.Random) -> rules_pb2.RebuildRequest:
    request = rules_pb2.RebuildRequest(game=real.game, players=real.players)
    shape = rng.randrange(4)
    if shape == 0:
        request.inputs.extend(rules_pb2.GameInput() for _ in range(rng.randrange(1, 5)))
    elif shape == 1:
        request.inputs.append(rules_pb2.GameInput(deal=rules_pb2.DeckOrder(cards=["ZZ"])))
    elif shape == 2:
        action = rules_pb2.SeatAction(seat=0, action="play AS")
        request.inputs.extend(rules_pb2.GameInput(action=action) for _ in range(3))
    else:
        step = rules_pb2.GameInput(action=rules_pb2.SeatAction(seat=0, action="pass"))
        request.inputs.extend([step] * (MAX_REBUILD_INPUTS + 1))
    return request


GENERATORS: dict[str, Callable[[Material], Awaitable[HostileRequest]]] = {
    "garbage_snapshot": garbage_snapshot,
    "tampered_snapshot": tampered,
    "forged_reference": forged_reference,
    "rules_malformed": rules_malformed,
}
