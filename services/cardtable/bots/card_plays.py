"""Which of a seat's listed actions the search and the exact ending weigh: card plays, one
card of each group of interchangeable ones (:mod:`cardtable.engine.interchangeable`)."""

from __future__ import annotations

from collections.abc import Sequence

from cardtable.engine.actions import PLAY_CARD, Action
from cardtable.engine.game import GameState


def chooses_a_card(actions: Sequence[Action]) -> bool:
    """Whether the legal ``actions`` listed are card plays (not bids, contracts, or a set of
    cards to pass or discard, which are not listed).

    >>> from cardtable.engine.actions import parse_action
    >>> chooses_a_card([parse_action("play AS"), parse_action("play 7H")])
    True
    >>> chooses_a_card([parse_action("bid 0"), parse_action("bid 1")]), chooses_a_card([])
    (False, False)
    """
    return bool(actions) and all(action.kind == PLAY_CARD for action in actions)


def one_of_each_kind(world: GameState, seat: int, candidates: list[Action]) -> list[Action]:
    """The first of each group of interchangeable card plays among ``candidates``, in their
    order; other actions (bids, passes) as they are."""
    if not chooses_a_card(candidates):
        return candidates
    groups = world.interchangeable_plays(seat, [action.card for action in candidates])
    firsts = {group[0] for group in groups}
    return [action for action in candidates if action.card in firsts]
