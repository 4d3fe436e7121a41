"""Real game states from the rules service, as material for broken and tampered ones.

The harness asks the rules service itself for a new game of each kind, deals it from a
shuffled copy of the deck the service returned, and plays a few legal actions from
``LegalActions``: every state here is one the service produced, never one the harness built
from game knowledge.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cardtable_api.common.v1 import common_pb2
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc

STATE_GAMES: tuple[tuple[str, int, dict[str, str]], ...] = (
    ("hearts", 4, {"quick": "true"}),
    ("whist", 4, {}),
    ("358", 3, {}),
    ("belote", 4, {}),
)
ACTIONS_PER_GAME = 12


@dataclass(frozen=True)
class RealState:
    """A state the rules service produced, with what is needed to call it correctly."""

    game: str
    players: int
    state: rules_pb2.GameState
    deck: tuple[str, ...]
    to_act: tuple[int, ...]
    #: A legal action of the first seat to act ("" when none).
    action: str


async def collect_states(
    stub: rules_pb2_grpc.RulesServiceAsyncStub, rng: random.Random
) -> list[RealState]:
    """A few states per game: before the deal, after it, and after some legal actions."""
    collected: list[RealState] = []
    for game, players, options in STATE_GAMES:
        created = await stub.NewGame(
            rules_pb2.NewGameRequest(
                game=game, players=players, options=common_pb2.GameOptions(values=options)
            )
        )
        deck = tuple(created.deck)
        collected.append(RealState(game, players, created.state, deck, (), ""))
        order = list(deck)
        rng.shuffle(order)
        dealt = await stub.Deal(rules_pb2.DealRequest(state=created.state, deck_order=order))
        state, status = dealt.state, dealt.status
        for _ in range(ACTIONS_PER_GAME):
            if status.over or status.needs_deal or not status.to_act:
                break
            seat = status.to_act[0]
            legal = await stub.LegalActions(rules_pb2.LegalActionsRequest(state=state, seat=seat))
            if legal.HasField("choose_cards"):
                choice = legal.choose_cards
                cards = rng.sample(list(choice.cards), choice.count)
                action = " ".join([choice.verb, *cards])
            else:
                action = rng.choice(list(legal.actions))
            collected.append(RealState(game, players, state, deck, tuple(status.to_act), action))
            applied = await stub.ApplyAction(
                rules_pb2.ApplyActionRequest(state=state, seat=seat, action=action)
            )
            state, status = applied.state, applied.status
    return collected
