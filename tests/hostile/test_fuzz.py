"""Hostile input against the rules and table services running as processes.

A thousand requests of every hostile kind get only the answers their kind allows, no event
is appended by any of them, and both services stay up. The second test shows the verdict can
go the other way, so the first one is not passing vacuously.
"""

from __future__ import annotations

import pytest
from grpc import StatusCode

from cardtable.hostile import FuzzReport, fuzz_stack
from cardtable.hostile.kinds import KINDS


@pytest.mark.services
async def test_a_thousand_hostile_requests_are_all_refused_properly() -> None:
    report = await fuzz_stack(requests=1000, seed=9)

    assert report.unexpected == 0, report.as_dict()
    assert report.crashes == []
    assert report.events_appended_by_hostile == 0
    assert report.legitimate_failures == []
    assert {kind.name for kind in KINDS} <= set(report.kinds)
    # the rules' per-move calls are tried on their unary methods and inside a Pipeline
    assert report.methods["Pipeline"] > 0 and report.methods["ApplyAction"] > 0
    assert report.legitimate_events >= report.legitimate_moves > 0
    assert report.ok


def test_a_server_failure_or_an_appended_event_fails_the_report() -> None:
    report = FuzzReport(seed=0)
    assert report.record("other_seat", "MakeMove", StatusCode.PERMISSION_DENIED, "no", 0)
    assert report.ok
    assert report.as_dict()["requests_by_method"] == {"MakeMove": 1}

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
