"""The fold keeps a table's game inputs and command ids in forms the garbage collector does
not walk."""

from __future__ import annotations

import gc

from cardtable.table_service.state import (
    TableState,
    apply_batch,
    is_deal,
    step_message,
)
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

DECK = ("2C", "3C", "4C")


def _batch(version: int, *events: events_pb2.Event) -> events_pb2.EventBatch:
    return events_pb2.EventBatch(table_version=version, events=list(events))


def test_inputs_are_kept_as_untracked_tuples_and_read_back_as_messages() -> None:
    state = TableState(table_id="t")
    created = events_pb2.TableCreated(game="hearts", seats=4)
    shuffled = events_pb2.DealShuffled(deck_order=DECK)
    apply_batch(
        state,
        _batch(
            1, events_pb2.Event(table_created=created), events_pb2.Event(deal_shuffled=shuffled)
        ),
        1,
    )
    for version in range(2, 50):
        taken = events_pb2.ActionTaken(seat=version % 4, action=f"play {version}")
        apply_batch(state, _batch(version, events_pb2.Event(action_taken=taken)), version)
    gc.collect()
    actions = state.inputs[1:]
    assert len(actions) == 48 and not any(gc.is_tracked(step) for step in actions)
    assert is_deal(state.inputs[0]) and not is_deal(actions[0])
    assert step_message(state.inputs[0]) == rules_pb2.GameInput(
        deal=rules_pb2.DeckOrder(cards=DECK)
    )
    assert step_message(actions[0]) == rules_pb2.GameInput(
        action=rules_pb2.SeatAction(seat=2, action="play 2")
    )


def test_command_ids_are_remembered_in_a_container_the_collector_does_not_track() -> None:
    state = TableState(table_id="t")
    created = events_pb2.TableCreated(game="hearts", seats=4)
    for version in range(1, 60):
        batch = _batch(version, events_pb2.Event(table_created=created))
        batch.command_id = f"command-{version}"
        apply_batch(state, batch, version)
    gc.collect()
    assert "command-1" in state.command_ids and "command-59" in state.command_ids
    assert "command-60" not in state.command_ids
    assert not gc.is_tracked(state.command_ids)
