"""Hostile input against the rules and table services running as processes.

Four hundred requests of every hostile kind get only the answers their kind allows, no event
is appended by any of them, and both services stay up; the per-move calls go both unary and
inside each service's ``Pipeline``. The second test shows the verdict can go the other way,
so the first one is not passing vacuously; the last ones show that a pipelined call is the
unary request itself, with the caller's token.
"""

from __future__ import annotations

import random

import pytest
from google.protobuf.message import DecodeError
from grpc import StatusCode

from cardtable_api.table.v1 import table_pb2
from cardtable_tools.hostile import FuzzReport, fuzz_stack
from cardtable_tools.hostile.calls import HostileRequest, sometimes_pipelined, table_call
from cardtable_tools.hostile.garbage import undecodable_bytes
from cardtable_tools.hostile.kinds import KINDS

ALICE = (("authorization", "Bearer alice-token"),)


@pytest.mark.services
async def test_four_hundred_hostile_requests_are_all_refused_properly() -> None:
    report = await fuzz_stack(requests=400, seed=9)

    assert report.unexpected == 0, report.as_dict()
    assert report.crashes == []
    assert report.events_appended_by_hostile == 0
    assert report.legitimate_failures == []
    assert {kind.name for kind in KINDS} <= set(report.kinds)
    assert report.calls > report.requests  # the floods' calls are each judged too
    # the rules' per-move calls and the table's GetTable and MakeMove are tried on their unary
    # methods and inside their service's Pipeline
    for method in (
        "RulesService.ApplyAction",
        "RulesService.Pipeline",
        "TableService.GetTable",
        "TableService.MakeMove",
        "TableService.Pipeline",
    ):
        assert report.methods[method] > 0, method
    assert report.legitimate_events >= report.legitimate_moves > 0
    assert report.ok


def test_a_server_failure_or_an_appended_event_fails_the_report() -> None:
    report = FuzzReport(seed=0)
    assert report.record(
        "other_seat", "TableService.Pipeline", StatusCode.PERMISSION_DENIED, "no", 0
    )
    assert report.ok
    assert report.as_dict()["requests_by_method"] == {"TableService.Pipeline": 1}

    assert not report.record("other_seat", "MakeMove", StatusCode.INTERNAL, "boom", 0)
    assert not report.ok
    assert report.unexpected == 1

    appended = FuzzReport(seed=0)
    assert not appended.record("out_of_turn", "MakeMove", StatusCode.FAILED_PRECONDITION, "", 2)
    assert appended.events_appended_by_hostile == 2
    assert not appended.ok

    crashed = FuzzReport(seed=0)
    crashed.crashes.append("table process exited with -9")
    assert not crashed.ok
    # an answer outside the kind's set is unexpected even when it is a refusal
    wrong = FuzzReport(seed=0)
    assert not wrong.record("forged_token", "MakeMove", StatusCode.INVALID_ARGUMENT, "", 0)
    assert wrong.as_dict()["kinds"]["forged_token"]["unexpected_examples"]


def _sent(request: HostileRequest, times: int = 400) -> list[HostileRequest]:
    rng = random.Random(3)
    return [sometimes_pipelined(request, rng) for _ in range(times)]


def test_a_pipelined_move_is_the_unary_one_with_its_callers_token_in_the_call() -> None:
    move = table_pb2.MakeMoveRequest(command_id="c-1", table_id="t-1", seat=2, action="play QS")
    unary = table_call("other_seat", "MakeMove", move, ALICE)

    pipelined = [sent for sent in _sent(unary) if sent.pipelined]
    assert 150 < len(pipelined) < 250  # about half
    assert {sent.label for sent in pipelined} == {"TableService.Pipeline"}
    calls = [table_pb2.PipelineRequest.FromString(sent.payload).calls for sent in pipelined]
    assert all(len(call) == 1 and call[0].make_move == move for call in calls)

    tokens = [(call[0].token, sent.metadata) for sent, call in zip(pipelined, calls, strict=True)]
    in_call = [metadata for token, metadata in tokens if token == "alice-token"]
    on_stream = [metadata for token, metadata in tokens if token == ""]
    assert len(in_call) + len(on_stream) == len(tokens)
    assert set(in_call) == {()} and set(on_stream) == {ALICE}
    assert len(in_call) > 2 * len(on_stream) > 0  # about one in four left on the stream


def test_garbage_and_a_malformed_header_stay_what_they_are_inside_a_pipeline() -> None:
    garbage = undecodable_bytes(random.Random(5), string_field_first=True)
    padded = (("authorization", "Bearer   "),)
    unary = table_call("garbage_bytes", "GetTable", garbage, padded)

    pipelined = [sent for sent in _sent(unary, times=20) if sent.pipelined]
    assert pipelined and {sent.metadata for sent in pipelined} == {padded}
    for sent in pipelined:
        with pytest.raises(DecodeError):
            table_pb2.PipelineRequest.FromString(sent.payload)
