"""Floods past the table service's quotas, against the rules and table services as processes.

On a flood replica with small caps every flood is refused where its quota says, with the
limit named, ``retry-after-ms`` where waiting helps, the refusals counted in the replica's
metric and nothing appended for them. On a replica whose quotas are off, the same floods
fail the report: the judge is not passing vacuously. The last tests feed the judge answers
directly.
"""

from __future__ import annotations

import pytest
from grpc import StatusCode

from cardtable_tools.hostile import FuzzReport, fuzz_stack
from cardtable_tools.hostile.flood_replica import FloodLimits
from cardtable_tools.hostile.floods import refusal_problem
from cardtable_tools.hostile.kinds import FLOOD_KINDS
from cardtable_tools.hostile.report import FloodCall
from cardtable_tools.hostile.wire import Answer

FLOODS = [kind.name for kind in FLOOD_KINDS]
EXHAUSTED = StatusCode.RESOURCE_EXHAUSTED


@pytest.mark.services
async def test_every_flood_is_refused_where_its_quota_says(
    nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)
    limits = FloodLimits()

    report = await fuzz_stack(requests=2 * len(FLOODS), seed=11, kinds=FLOODS, limits=limits)

    assert report.ok, report.as_dict()
    assert report.floods == report.requests == 2 * len(FLOODS)
    assert set(report.kinds) == set(FLOODS)
    assert report.events_appended_by_hostile == 0
    kinds = report.kinds

    # The token bucket: a new player's burst goes through, the rest of the flood is refused.
    bucket = kinds["mutation_flood"]
    assert bucket.codes["RESOURCE_EXHAUSTED"] > 0
    assert bucket.codes["PERMISSION_DENIED"] >= bucket.requests * (limits.mutation_burst + 1)

    # Open tables: exactly the limit created (one batch each), the two past it refused.
    tables = kinds["open_tables_flood"]
    floods = tables.requests
    assert tables.codes == {"OK": 3 * floods, "RESOURCE_EXHAUSTED": 2 * floods}
    assert tables.events_admitted == limits.open_tables_per_player * floods

    # Seats: the limit let through, the two past it refused. Each call (a host's table, then
    # the player's seat at it) let through appends one batch.
    seats = kinds["seats_flood"]
    assert seats.calls == 2 * (limits.seats_per_player + 2) * seats.requests
    assert seats.codes["RESOURCE_EXHAUSTED"] == 2 * seats.requests
    assert seats.events_admitted == seats.codes["OK"]

    # Watch streams: the holders, one refused, one let in past the full cap, one let in
    # again once the streams closed.
    player = kinds["player_watch_flood"]
    assert player.codes == {
        "OK": (limits.watches_per_player + 2) * player.requests,
        "RESOURCE_EXHAUSTED": player.requests,
    }
    anonymous = kinds["anonymous_watch_flood"]
    assert anonymous.codes == {
        "OK": (limits.anonymous_watches_per_replica + 2) * anonymous.requests,
        "RESOURCE_EXHAUSTED": anonymous.requests,
    }
    replica = kinds["replica_watch_flood"]
    assert replica.codes == {
        "OK": (limits.watches_per_replica + 1) * replica.requests,
        "RESOURCE_EXHAUSTED": 2 * replica.requests,
    }


@pytest.mark.services
async def test_floods_fail_the_report_on_a_replica_without_quotas(
    nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NATS_URL", nats_url)

    report = await fuzz_stack(
        requests=len(FLOODS), seed=12, kinds=FLOODS, limits=FloodLimits(enabled=False)
    )

    assert not report.ok
    for name in FLOODS:
        tally = report.kinds[name]
        assert "RESOURCE_EXHAUSTED" not in tally.codes, name
        assert tally.unexpected >= 1, name
        assert any("problem" in example for example in tally.examples), name
    # Tables past the limit were created: their events are the flood's, not a refusal's.
    assert report.kinds["open_tables_flood"].events_admitted == 5
    assert report.events_appended_by_hostile == 0


def test_a_refusal_names_its_limit_and_says_when_to_retry() -> None:
    sentence = "too many requests: at most 20 a second per player (bursts of 40)"
    good = Answer(EXHAUSTED, sentence, (("retry-after-ms", "50"),))
    assert refusal_problem(good, 20, retry_within_ms=50) is None
    assert refusal_problem(Answer(EXHAUSTED, sentence), 40, retry_within_ms=None) is None

    assert "name its limit" in str(refusal_problem(good, 2, retry_within_ms=50))
    assert "no retry-after-ms" in str(
        refusal_problem(Answer(EXHAUSTED, sentence), 20, retry_within_ms=50)
    )
    for wait in ("0", "51", "soon"):
        late = Answer(EXHAUSTED, sentence, (("retry-after-ms", wait),))
        assert refusal_problem(late, 20, retry_within_ms=50) is not None, wait


def test_a_flood_call_with_a_problem_or_a_refusal_that_appended_fails_the_report() -> None:
    report = FuzzReport(seed=0)
    assert report.record_flood(
        "open_tables_flood",
        [
            FloodCall("TableService.CreateTable", StatusCode.OK, appended=1, admitted=True),
            FloodCall("TableService.CreateTable", EXHAUSTED, "you have 1 open tables"),
        ],
    )
    assert report.ok and report.events_admitted == 1 and report.calls == 2
    assert report.requests == report.floods == 1

    assert not report.record_flood(
        "open_tables_flood", [FloodCall("TableService.CreateTable", EXHAUSTED, appended=1)]
    )
    assert report.events_appended_by_hostile == 1 and not report.ok

    judged = FuzzReport(seed=0)
    assert not judged.record_flood(
        "player_watch_flood",
        [FloodCall("TableService.WatchTable", StatusCode.OK, problem="let in past the limit")],
    )
    assert judged.unexpected == 1 and not judged.ok
    (example,) = judged.as_dict()["kinds"]["player_watch_flood"]["unexpected_examples"]
    assert example["problem"] == "let in past the limit"
