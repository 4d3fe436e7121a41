"""A record rebuilt from a log that is not what a table writes still gets a verdict."""

from __future__ import annotations

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.records import record_from_batches
from cardtable.eventlog.store import StoredBatch
from cardtable_api.events.v1 import events_pb2


def _batch(version: int, table_id: str = "t1", **body: object) -> events_pb2.EventBatch:
    return events_pb2.EventBatch(
        schema_version=1,
        table_id=table_id,
        command_id=f"c{version}",
        table_version=version,
        events=[events_pb2.Event(**body)],  # type: ignore[arg-type]
    )


def test_an_action_before_any_deal_and_a_seat_the_table_lacks_do_not_crash() -> None:
    batches = [
        _batch(1, table_created=events_pb2.TableCreated(game="hearts", seats=4)),
        _batch(2, player_seated=events_pb2.PlayerSeated(seat=9, player_id="x")),
        _batch(3, table_id="t2", action_taken=events_pb2.ActionTaken(seat=0, action="play 2C")),
    ]
    record = record_from_batches("t1", batches)
    assert record["deals"] == [] and [seat["seat"] for seat in record["seats"]] == [0, 1, 2, 3]
    report = audit_log(
        "t1",
        [StoredBatch(batch, number + 1) for number, batch in enumerate(batches)],
        verifier=None,
    )
    assert not report.ok
    assert any("belongs to t2" in str(problem) for problem in report.problems)
