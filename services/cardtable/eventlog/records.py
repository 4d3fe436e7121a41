"""A game record (docs/record-format.md) from a table's event batches, without any game rule.

Everything a record holds is in the log: the set-up in TableCreated and GameStarted, each
deal's deck order in DealShuffled, its proof in DealCommitted/DealSeedRevealed, every action in
ActionTaken, and the results the rules service produced in FactRecorded (TrickWon, DealScored)
and GameFinished. The engine's ``verify_record`` then checks all of it independently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cardtable.engine.record import RECORD_FORMAT, RECORD_VERSION
from cardtable.eventlog.opening import opened_batches
from cardtable.platform.event_upcasting import END_TEXTS, end_reason, handover_reason
from cardtable.platform.fact_upcasting import typed_fact
from cardtable_api.events.v1 import events_pb2

PLAYER_KINDS = {events_pb2.PLAYER_KIND_PERSON: "person", events_pb2.PLAYER_KIND_BOT: "bot"}
FILL = events_pb2.SeatHandedToBot.REASON_FILL


def _ints(values: Iterable[Any]) -> list[int]:
    return [int(value) for value in values]


def record_from_batches(table_id: str, batches: Sequence[events_pb2.EventBatch]) -> dict[str, Any]:
    """The record of the (first) game played at the table whose batches are given, in order.

    Only what is public goes in: the deals that have ended, opened with their published keys
    (eventlog/opening.py). A deal still being played has its shuffle sealed, and is left out.
    """
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "table_id": table_id,
    }
    seats: list[dict[str, Any]] = []
    deals: list[dict[str, Any]] = []
    commitments: dict[int, str] = {}
    revealed: set[int] = set()
    result: dict[str, Any] = {"over": False, "totals": [], "places": []}
    #: Whether the deal in play is still sealed: its actions and facts stay out of the record.
    sealed_deal = False
    for batch in opened_batches(table_id, batches):
        for event in batch.events:
            which = event.WhichOneof("body")
            body: Any = getattr(event, which) if which else None
            if sealed_deal and which in ("action_taken", "fact_recorded"):
                continue
            if which == "table_created":
                record["game"] = body.game
                record["players"] = body.seats
                record["options"] = dict(body.options.values)
                seats = [{"seat": seat} for seat in range(body.seats)]
            elif which == "player_seated" and body.seat < len(seats):
                seats[body.seat].update(
                    player_id=body.player_id, kind=PLAYER_KINDS.get(body.kind, "person")
                )
            elif (
                which == "seat_handed_to_bot"
                and handover_reason(body) == FILL
                and body.seat < len(seats)
            ):
                seats[body.seat].update(player_id=body.player_id, kind="bot")
            elif which == "game_started":
                record["first_dealer"] = body.first_dealer
            elif which == "deal_committed":
                commitments[body.deal_number] = body.commitment
                sealed_deal = True  # until its shuffle is seen in the clear
            elif which == "deal_shuffled":
                sealed_deal = False
                deals.append(
                    {
                        "number": body.deal_number,
                        "deck": list(body.deck_order),
                        "shuffle": {
                            "commitment": commitments.get(body.deal_number, ""),
                            "seed": body.seed,
                        },
                        "actions": [],
                        "tricks": [],
                        "scores": None,
                    }
                )
            elif which == "deal_seed_revealed":
                revealed.add(body.deal_number)
                for deal in deals:
                    if deal["number"] == body.deal_number:
                        # the proof is what was published: the revealed seed, not the copy
                        # the servers kept
                        deal["shuffle"]["seed"] = body.seed
            elif which == "action_taken" and deals:  # one before any deal: the log check says
                deals[-1]["actions"].append({"seat": body.seat, "action": body.action})
            elif which == "fact_recorded":
                _note_fact(deals, typed_fact(body))
            elif which == "game_finished":
                result = {
                    "over": True,
                    "totals": _ints(body.totals),
                    "places": _ints(body.places),
                }
                if body.ended_early:  # the rule's name, as the record format gives it
                    result["ended_early"] = END_TEXTS.get(end_reason(body), "")
    _drop_unrevealed_seeds(deals, revealed, over=result["over"])
    record["seats"] = seats
    record["deals"] = deals
    record["result"] = result
    return record


def _drop_unrevealed_seeds(deals: list[dict[str, Any]], revealed: set[int], *, over: bool) -> None:
    """A deal that has ended proves its shuffle only with the seed the table published.

    The servers' own copy (``DealShuffled``) stands in only for the deal still being played,
    whose seed is not due yet; an ended deal without ``DealSeedRevealed`` keeps its commitment
    and loses the seed, and the audit says it was never revealed (docs/fair-deals.md).
    """
    for index, deal in enumerate(deals):
        ended = over or index < len(deals) - 1
        if ended and deal["number"] not in revealed:
            deal["shuffle"].pop("seed", None)


def _note_fact(deals: list[dict[str, Any]], recorded: events_pb2.FactRecorded) -> None:
    if not deals:
        return
    deal, which = deals[-1], recorded.WhichOneof("body")
    if which == "deal_started":
        deal["dealer"] = recorded.deal_started.dealer
    elif which == "trick_won":
        trick = recorded.trick_won
        deal["tricks"].append(
            {"leader": trick.leader, "winner": trick.seat, "cards": list(trick.cards)}
        )
    elif which == "deal_scored":
        deal["scores"] = list(recorded.deal_scored.scores)
        deal["totals"] = list(recorded.deal_scored.totals)
