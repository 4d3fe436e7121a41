"""The tricks a 3-5-8 deal still holds, estimated from the hands: where a cut playout stops.

A playout from a deal's first trick plays 48 cards, and most of a card play's search work is
the deal's last tricks, which decide little of the choice between two cards now. The search
may cut a playout once the current trick and a few more are played
(``SearchStrategy(cut_tricks=...)``) and value the rest by this model, so the same work buys
several times the worlds. In a drawn world every hand is known, so the model reads them all.

For each seat it counts, by trumps and plain suits apart, the cards that are the highest of
their suit still in play, the second, the third and the lower ones; its trumps against its
voids and singletons (ruffs); who leads. A linear fit of those counts to the tricks the
rule-based players really took from that point, one fit for each kind of contract and number
of tricks left, gives each seat's share; the shares are scaled to the tricks left. The
coefficients are data (``trick_model_358.json``), refitted by
``python -m cardtable_tools.bench.fit_trick_model``, which prints how well they fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import TypeGuard

from cardtable.bots.outlook import contract_kind
from cardtable.engine.cards import SUIT_OF
from cardtable.engine.game import GameState
from cardtable.engine.games.three_five_eight.rules import (
    DEALS,
    HAND_SIZE,
    PLAY_PHASE,
    PLAYERS,
    ThreeFiveEightState,
)

#: The coefficients' file, beside this module.
COEFFICIENTS_FILE = "trick_model_358.json"
#: Work units one estimate is charged. It takes the CPU of four to five keen playout actions,
#: so a cut playout is undercharged by about a tenth: measured strength is at slightly more CPU.
ESTIMATE_UNITS = 3
#: Cards below this place in their suit count together.
PLACES = 4


def model_key(kind: str, tricks_left: int) -> str:
    return f"{kind}/{tricks_left}"


def hand_features(state: ThreeFiveEightState) -> list[list[float]]:
    """Each seat's counts at a trick's start (see the module's docstring), a constant first."""
    trump = state.trump
    places = [[[0] * PLACES for _ in range(2)] for _ in range(PLAYERS)]
    lengths = [[0] * 4 for _ in range(PLAYERS)]
    for suit in range(4):
        holders = sorted(
            (
                (card, seat)
                for seat in range(PLAYERS)
                for card in state.hands[seat]
                if SUIT_OF[card] == suit
            ),
            reverse=True,
        )
        is_trump = int(suit == trump)
        for place, (_, seat) in enumerate(holders):
            places[seat][is_trump][min(place, PLACES - 1)] += 1
            lengths[seat][suit] += 1
    rows = []
    for seat in range(PLAYERS):
        trumps = lengths[seat][trump] if trump >= 0 else 0
        plain = [lengths[seat][suit] for suit in range(4) if suit != trump]
        voids = sum(1 for length in plain if length == 0)
        singletons = sum(1 for length in plain if length == 1)
        rows.append(
            [
                1.0,
                *map(float, places[seat][0]),
                *map(float, places[seat][1]),
                float(voids * min(trumps, 3)),
                float(singletons * min(trumps, 3)),
                1.0 if state.leader == seat else 0.0,
                float(trumps * trumps),
                float(voids),
            ]
        )
    return rows


#: How many numbers :func:`hand_features` gives a seat.
FEATURES = 1 + 2 * PLACES + 5


@cache
def coefficients() -> Mapping[str, Sequence[float]]:
    """The fitted coefficients by :func:`model_key`, read once."""
    text = resources.files(__package__).joinpath(COEFFICIENTS_FILE).read_text()
    data: dict[str, list[float]] = json.loads(text)["coefficients"]
    return data


def can_estimate(state: GameState) -> TypeGuard[ThreeFiveEightState]:
    """Whether a playout may stop here and be valued by the model: a 3-5-8 deal in play at a
    trick's start, not the game's last deal (whose end decides the places, which the model
    does not see)."""
    return (
        type(state) is ThreeFiveEightState
        and state.phase == PLAY_PHASE
        and not state.trick
        and len(state.deal_scores) < DEALS - 1
    )


def estimated_tricks(state: ThreeFiveEightState) -> list[float]:
    """Each seat's tricks at the deal's end: those taken, and its share of those left."""
    left = HAND_SIZE - len(state.tricks)
    weights = coefficients()[model_key(contract_kind(state.contract), left)]
    shares = [
        max(0.0, sum(weight * value for weight, value in zip(weights, row, strict=True)))
        for row in hand_features(state)
    ]
    if not any(shares):
        shares = [1.0] * PLAYERS
    scale = left / sum(shares)
    return [state.tricks_won[seat] + share * scale for seat, share in enumerate(shares)]


def estimated_deal_scores(state: ThreeFiveEightState) -> tuple[float, ...]:
    """The deal's scores the estimated tricks would give."""
    return state.scores_for_tricks(estimated_tricks(state))


def cut_after(state: GameState, cut_tricks: int) -> int | None:
    """The tricks of the deal, counted from its start, after which a playout from ``state``
    may stop: the current one and ``cut_tricks`` more; None where no cut applies (another
    game, the last deal, or ``cut_tricks`` 0)."""
    if not cut_tricks or type(state) is not ThreeFiveEightState:
        return None
    if len(state.deal_scores) >= DEALS - 1:
        return None
    return len(state.tricks) + 1 + cut_tricks


def cut_here(state: GameState, after: int) -> TypeGuard[ThreeFiveEightState]:
    """Whether a playout that may stop after ``after`` tricks stops at ``state``."""
    return can_estimate(state) and len(state.tricks) >= after
