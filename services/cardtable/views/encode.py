"""The engine's observation of a seat as a ``SeatView`` message (the rules service's side).

Each message is built in one constructor call with its repeated fields as lists: setting
fields one by one, or appending to repeated fields, crosses into the protobuf runtime once per
value, and a view holds a hundred values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.message import Message

from cardtable.views.names import CONTRACTS, PASS_DIRECTIONS, PHASES, SUITS
from cardtable_api.common.v1 import common_pb2, views_pb2

Observation = Mapping[str, Any]


def encode_view(observation: Observation) -> views_pb2.SeatView:
    """``observation`` (``GameState.observation(seat)``) as a message holding the same facts."""
    game = observation["game"]
    details_field, details = _DETAILS[game](observation)
    # The oneof's field by name: a dict typed Any, as mypy cannot tie a name to its type.
    game_details: dict[str, Any] = {details_field: details}
    return views_pb2.SeatView(
        game=game,
        players=observation["players"],
        seat=observation["seat"],
        options=common_pb2.GameOptions(
            values={name: _option_text(value) for name, value in observation["options"].items()}
        ),
        phase=PHASES[observation["phase"]],
        deal_number=observation["deal_number"],
        dealer=observation["dealer"],
        to_act=observation["to_act"],
        deal_scores=[views_pb2.DealScores(scores=row) for row in observation["deal_scores"]],
        totals=observation["totals"],
        over=observation["over"],
        places=observation["places"],
        legal_actions=[
            views_pb2.LegalAction(action=action) for action in observation["legal_actions"]
        ],
        choose_cards=_choice(observation["choose_cards"]),
        hand=observation["hand"],
        hand_sizes=observation["hand_sizes"],
        trick=[
            views_pb2.PlayedCard(seat=entry["seat"], card=entry["card"])
            for entry in observation["trick"]
        ],
        leader=observation["leader"],
        tricks=[
            views_pb2.Trick(leader=trick["leader"], cards=trick["cards"], winner=trick["winner"])
            for trick in observation["tricks"]
        ],
        tricks_won=observation.get("tricks_won") or (),
        trump=SUITS.get(observation.get("trump") or "", views_pb2.SUIT_UNSPECIFIED),
        **game_details,
    )


def _option_text(value: bool | int | str) -> str:
    """An option's value as the text CreateTable takes (``true``, ``3``, ``fast``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _choice(choice: Mapping[str, Any] | None) -> views_pb2.CardSetChoice | None:
    if choice is None:
        return None
    return views_pb2.CardSetChoice(
        verb=choice["verb"], cards=choice["cards"], count=choice["count"]
    )


def _whist(observation: Observation) -> tuple[str, Message]:
    return "whist", (
        views_pb2.WhistDetails(
            cards_each=observation["cards_each"],
            deals_total=observation["deals_total"],
            turned_up=observation["turned_up"] or "",
            bids=[views_pb2.WhistBid(tricks=bid) for bid in observation["bids"]],
            exact_streaks=observation["exact_streaks"],
            miss_streaks=observation["miss_streaks"],
        )
    )


def _three_five_eight(observation: Observation) -> tuple[str, Message]:
    return "three_five_eight", (
        views_pb2.ThreeFiveEightDetails(
            declarer=observation["declarer"],
            third=observation["third"],
            contract=CONTRACTS.get(observation["contract"], views_pb2.CONTRACT_UNSPECIFIED),
            targets=observation["targets"],
            used_contracts=[
                views_pb2.UsedContracts(contracts=[CONTRACTS[name] for name in used])
                for used in observation["used_contracts"]
            ],
            talon_size=observation["talon_size"],
            talon=observation["talon"],
            discarded=observation["discarded"],
            exchanges_owed=[
                views_pb2.ExchangeOwed(
                    creditor=owed["creditor"], debtor=owed["debtor"], count=owed["count"]
                )
                for owed in observation["exchanges_owed"]
            ],
            exchanges=[
                views_pb2.Exchange(
                    creditor=made["creditor"],
                    debtor=made["debtor"],
                    given=made["given"] or "",
                    returned=made["returned"] or "",
                )
                for made in observation["exchanges"]
            ],
            exchanges_skipped=[
                views_pb2.ExchangeSkipped(creditor=skipped["creditor"], count=skipped["count"])
                for skipped in observation["exchanges_skipped"]
            ],
        )
    )


def _belote(observation: Observation) -> tuple[str, Message]:
    return "belote", (
        views_pb2.BeloteDetails(
            teams=[views_pb2.TeamSeats(seats=seats) for seats in observation["teams"]],
            team_totals=observation["team_totals"],
            target=observation["target"],
            turned_card=observation["turned_card"] or "",
            bid_round=observation["bid_round"],
            bids=[
                views_pb2.BeloteBid(seat=bid["seat"], bid=bid["bid"]) for bid in observation["bids"]
            ],
            taker=observation["taker"],
            team_points=observation["team_points"],
            belote=observation["belote"],
        )
    )


def _hearts(observation: Observation) -> tuple[str, Message]:
    return "hearts", (
        views_pb2.HeartsDetails(
            pass_direction=PASS_DIRECTIONS[observation["pass_direction"]],
            passed=observation["passed"],
            received=observation["received"],
            passes_chosen=observation["passes_chosen"],
            hearts_broken=observation["hearts_broken"],
            points=observation["points"],
        )
    )


#: Per game: the ``details`` field it fills, and what it fills it with.
_DETAILS: dict[str, Callable[[Observation], tuple[str, Message]]] = {
    "whist": _whist,
    "358": _three_five_eight,
    "belote": _belote,
    "hearts": _hearts,
}
