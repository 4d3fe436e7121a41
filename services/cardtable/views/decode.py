"""A ``SeatView`` message back as the engine's observation dict (the readers' side).

The bots rebuild a whole state from a seat's observation (``cardtable.engine.determinize``),
which reads the engine's dict; this gives them exactly that dict, ints as ints and ``None``
where the engine writes it, so a bot decides the same from the wire as in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cardtable.engine.options import options_to_dict, read_options
from cardtable.engine.registry import game_spec
from cardtable.views.names import CONTRACTS, PASS_DIRECTIONS, PHASES, SUITS, inverse
from cardtable_api.common.v1 import views_pb2

_PHASE_NAMES = inverse(PHASES)
_SUIT_LETTERS = inverse(SUITS)
_CONTRACT_NAMES = inverse(CONTRACTS)
_PASS_DIRECTION_NAMES = inverse(PASS_DIRECTIONS)


def decode_view(view: views_pb2.SeatView) -> dict[str, Any]:
    """The observation ``view`` was encoded from (``GameState.observation(seat)``)."""
    spec = game_spec(view.game)
    choice = view.choose_cards if view.HasField("choose_cards") else None
    observation: dict[str, Any] = {
        "game": view.game,
        "players": view.players,
        "seat": view.seat if view.HasField("seat") else None,
        "options": options_to_dict(read_options(spec.options_type, dict(view.options.values))),
        "phase": _PHASE_NAMES[view.phase],
        "deal_number": view.deal_number,
        "dealer": view.dealer,
        "to_act": list(view.to_act),
        "deal_scores": [list(row.scores) for row in view.deal_scores],
        "totals": list(view.totals),
        "over": view.over,
        "places": list(view.places),
        "legal_actions": [legal.action for legal in view.legal_actions],
        "choose_cards": (
            {"verb": choice.verb, "cards": list(choice.cards), "count": choice.count}
            if choice is not None
            else None
        ),
        "hand": list(view.hand),
        "hand_sizes": list(view.hand_sizes),
        "trick": [{"seat": played.seat, "card": played.card} for played in view.trick],
        "leader": view.leader if view.HasField("leader") else None,
        "tricks": [
            {"leader": trick.leader, "cards": list(trick.cards), "winner": trick.winner}
            for trick in view.tricks
        ],
    }
    observation.update(_DETAILS[view.game](view))
    return observation


def _optional(message: Any, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None


def _whist(view: views_pb2.SeatView) -> dict[str, Any]:
    details = view.whist
    return {
        "cards_each": details.cards_each,
        "deals_total": details.deals_total,
        "turned_up": details.turned_up or None,
        "trump": _SUIT_LETTERS.get(view.trump, ""),
        "bids": [_optional(bid, "tricks") for bid in details.bids],
        "tricks_won": list(view.tricks_won),
        "exact_streaks": list(details.exact_streaks),
        "miss_streaks": list(details.miss_streaks),
    }


def _three_five_eight(view: views_pb2.SeatView) -> dict[str, Any]:
    details = view.three_five_eight
    return {
        "declarer": _optional(details, "declarer"),
        "third": _optional(details, "third"),
        "contract": _CONTRACT_NAMES.get(details.contract, ""),
        "trump": _SUIT_LETTERS.get(view.trump, ""),
        "targets": list(details.targets),
        "used_contracts": [
            [_CONTRACT_NAMES[contract] for contract in used.contracts]
            for used in details.used_contracts
        ],
        "talon_size": details.talon_size,
        "talon": list(details.talon),
        "discarded": list(details.discarded),
        "exchanges_owed": [
            {"creditor": owed.creditor, "debtor": owed.debtor, "count": owed.count}
            for owed in details.exchanges_owed
        ],
        "exchanges": [
            {
                "creditor": made.creditor,
                "debtor": made.debtor,
                "given": made.given or None,
                "returned": made.returned or None,
            }
            for made in details.exchanges
        ],
        "exchanges_skipped": [
            {"creditor": skipped.creditor, "count": skipped.count}
            for skipped in details.exchanges_skipped
        ],
        "tricks_won": list(view.tricks_won),
    }


def _belote(view: views_pb2.SeatView) -> dict[str, Any]:
    details = view.belote
    return {
        "teams": [list(team.seats) for team in details.teams],
        "team_totals": list(details.team_totals),
        "target": details.target,
        "turned_card": details.turned_card or None,
        "bid_round": _optional(details, "bid_round"),
        "bids": [{"seat": bid.seat, "bid": bid.bid} for bid in details.bids],
        "trump": _SUIT_LETTERS.get(view.trump),
        "taker": _optional(details, "taker"),
        "tricks_won": list(view.tricks_won),
        "team_points": list(details.team_points),
        "belote": details.belote,
    }


def _hearts(view: views_pb2.SeatView) -> dict[str, Any]:
    details = view.hearts
    return {
        "pass_direction": _PASS_DIRECTION_NAMES[details.pass_direction],
        "passed": list(details.passed),
        "received": list(details.received),
        "passes_chosen": list(details.passes_chosen),
        "hearts_broken": details.hearts_broken,
        "points": list(details.points),
    }


#: Per game: the keys only that game's observation has, read from ``details`` (and the shared
#: fields whose "none" the game writes its own way: Whist's no trump is "", Belote's None).
_DETAILS: dict[str, Callable[[views_pb2.SeatView], dict[str, Any]]] = {
    "whist": _whist,
    "358": _three_five_eight,
    "belote": _belote,
    "hearts": _hearts,
}
