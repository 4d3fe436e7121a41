"""Whole random games written as records: for ``cardtable record``, tests and demos."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardtable.bots.random_play import random_action, shuffled_deck
from cardtable.engine.game import GameState
from cardtable.engine.record import RecordBuilder
from cardtable.engine.registry import game_spec
from cardtable.engine.shuffle import SEED_BYTES, commitment, deck_order_from_seed

#: Chooses an action's text for a seat, or None to let the random player choose.
Script = Callable[[GameState, int], str | None]


def record_random_game(
    game: str,
    players: int,
    options: Mapping[str, Any] | None,
    seed: int,
    *,
    shuffle_proofs: bool = False,
    script: Script | None = None,
    seats: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A whole game with random legal actions (or ``script``'s), as a record.

    With ``shuffle_proofs`` each deck order comes from a seed with its commitment, as the
    table service deals. The seeds come from the seeded generator, so they repeat run to run:
    right for tests and demos, never for real tables (which draw them from ``secrets``).
    """
    rng = random.Random(seed)
    builder = RecordBuilder.start(
        game_spec(game), players, options or {}, rng.randrange(players), seats
    )
    state = builder.state
    while not state.is_over():
        if state.needs_deal():
            if shuffle_proofs:
                shuffle_seed = rng.randbytes(SEED_BYTES)
                proof = {"commitment": commitment(shuffle_seed), "seed": shuffle_seed.hex()}
                builder.deal(deck_order_from_seed(shuffle_seed, state.deck()), shuffle=proof)
            else:
                builder.deal(shuffled_deck(state, rng))
            continue
        to_act = state.to_act()
        seat = to_act[0] if len(to_act) == 1 else rng.choice(to_act)
        scripted = script(state, seat) if script else None
        builder.act(seat, scripted or str(random_action(state, seat, rng)))
    return builder.to_json()
