"""Rule-based play for the four games, on an engine state, from one seat's point of view.

Each game's ``act(state, seat)`` reads only what ``seat`` may know (its own hand and what was
played or shown to everybody), so it gives the same answer on the real state and on any state
rebuilt from the seat's observation. That lets one set of rules serve both as the ``rules``
strategy and as the fast playout policy of the ``search`` strategy, which calls it on sampled
states without going through observations.

:func:`keen_action` is the rule-based player with a few habits of stronger players, which make
playouts closer to real play: in Hearts it fishes for the queen of spades, leads low from
short suits and unloads high cards on tricks without points; in Belote the taker draws trumps,
and it cashes its masters, trusts a winning partner and plays second hand low; in Whist it
keeps its masters of trump for the tricks it still needs and leads the card likeliest to lose
once it wants no more. It is the hard level's playout; the ``rules`` strategy (the easy
level) and the plain search keep :func:`rules_action`, so the ladder's lower rungs and the
search it is measured against stay what they were. :func:`pushing_action` adds, in Whist,
the habits of searching players toward a seat that has its bid, one of which reads every hand
of the sampled world: the ``push`` playout, which foresees real Whist deals better than
``keen`` but does not make hard stronger (docs/proving-it.md), so no level plays it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cardtable.bots.rules import belote, hearts, three_five_eight, whist
from cardtable.engine.actions import Action
from cardtable.engine.game import GameState
from cardtable.engine.games.belote.rules import BeloteState
from cardtable.engine.games.hearts.rules import PASS_PHASE as HEARTS_PASS_PHASE
from cardtable.engine.games.hearts.rules import HeartsState
from cardtable.engine.games.three_five_eight.rules import DISCARD_PHASE as DISCARD_358_PHASE
from cardtable.engine.games.three_five_eight.rules import ThreeFiveEightState
from cardtable.engine.games.whist.rules import WhistState

#: Each game's rule-based player by the exact type of its state: a look-up, as a chain of
#: ``isinstance`` checks against abstract classes costs a twentieth of a playout.
ACTS: dict[type[GameState], Callable[[Any, int], Action]] = {
    HeartsState: hearts.act,
    WhistState: whist.act,
    ThreeFiveEightState: three_five_eight.act,
    BeloteState: belote.act,
}


def rules_action(state: GameState, seat: int) -> Action:
    """The rule-based player's action for ``seat``, which must be able to act in ``state``."""
    act = ACTS.get(type(state))
    if act is None:
        raise ValueError(f"no rule-based player for {state.spec.title}")
    return act(state, seat)


def set_alternatives(state: GameState, seat: int) -> list[Action]:
    """Sets of cards of other kinds than the rule-based player's own for ``seat`` to choose
    now, for a search to weigh beside it: Hearts' passes
    (:func:`cardtable.bots.rules.hearts.pass_alternatives`) and the 3-5-8 declarer's discards
    (:func:`cardtable.bots.rules.three_five_eight.discard_alternatives`)."""
    if type(state) is HeartsState and state.phase == HEARTS_PASS_PHASE:
        return hearts.pass_alternatives(state, seat)
    if type(state) is ThreeFiveEightState and state.phase == DISCARD_358_PHASE:
        return three_five_eight.discard_alternatives(state, seat)
    return []


#: The keen player by the exact type of its state (3-5-8 has no habits of its own).
KEEN_ACTS: dict[type[GameState], Callable[[Any, int], Action]] = {
    **ACTS,
    HeartsState: hearts.act_keen,
    BeloteState: belote.act_keen,
    WhistState: whist.act_keen,
}


def keen_action(state: GameState, seat: int) -> Action:
    """:func:`rules_action` with the habits of :func:`cardtable.bots.rules.hearts.act_keen`
    in Hearts, :func:`cardtable.bots.rules.belote.act_keen` in Belote and
    :func:`cardtable.bots.rules.whist.act_keen` in Whist."""
    act = KEEN_ACTS.get(type(state))
    if act is None:
        return rules_action(state, seat)
    return act(state, seat)


def pushing_action(state: GameState, seat: int) -> Action:
    """:func:`keen_action`, but in Whist :func:`cardtable.bots.rules.whist.act_pushing`, which
    reads every hand: the ``push`` playout, for sampled worlds only."""
    if type(state) is WhistState:
        return whist.act_pushing(state, seat)
    return keen_action(state, seat)
