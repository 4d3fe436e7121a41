"""The pure parts of the scoring service, without servers: decoding, rating rules, tokens."""

from __future__ import annotations

import doctest
import gc
import weakref
from datetime import UTC, datetime
from types import ModuleType, SimpleNamespace

import nats.errors
import pytest
from prometheus_client import CollectorRegistry

from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchSigner
from cardtable.platform.settings import SettingsError
from cardtable.scoring_service import database, page_tokens, projection, sequence_reading
from cardtable.scoring_service.consumer import DeliveryLostError, ProjectionConsumer
from cardtable.scoring_service.messages import (
    PoisonMessageError,
    StoredMessage,
    decode,
    nanoseconds_from_rfc3339,
    stored_at_from_nanoseconds,
)
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.page_tokens import BadPageTokenError, decode_page_token
from cardtable.scoring_service.ratings import FinishedGame, RatedSeat, seat_changes
from cardtable.scoring_service.settings import ConsumerSettings, ScoringSettings
from cardtable_api.events.v1 import events_pb2
from tests.scoring_service.event_log import TableLog, people

NAMES = LogNames.from_prefix("cardtable")
AT = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "module", [database, page_tokens, projection, sequence_reading], ids=lambda m: m.__name__
)
def test_docstring_examples_pass(module: ModuleType) -> None:
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0
    assert results.failed == 0


def stored(
    batch: events_pb2.EventBatch | bytes,
    subject: str = "cardtable.table.t1",
    headers: dict[str, str] | None = None,
) -> StoredMessage:
    data = batch if isinstance(batch, bytes) else batch.SerializeToString()
    return StoredMessage(7, subject, data, headers or {"Cardtable-Schema": "1"}, AT)


def batch(**fields: object) -> events_pb2.EventBatch:
    values: dict[str, object] = {"schema_version": 1, "table_id": "t1", "table_version": 1}
    values.update(fields)
    return events_pb2.EventBatch(**values)  # type: ignore[arg-type]


def test_a_batch_without_occurred_at_takes_the_time_it_was_stored() -> None:
    decoded = decode(stored(batch()), NAMES)
    assert (decoded.table_id, decoded.sequence, decoded.occurred_at) == ("t1", 7, AT)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (stored(b"\xff\xff\xff"), "not an EventBatch"),
        (stored(batch(schema_version=3)), "schema version 3 is newer than this reader"),
        (stored(batch(schema_version=0)), "the batch has no schema version"),
        (stored(batch(), headers={"Cardtable-Schema": "2"}), "Cardtable-Schema header '2'"),
        (stored(batch(), subject="cardtable.lobby.t1"), "subject 'cardtable.lobby.t1' is not"),
        (stored(batch(table_id="t2")), "the batch is for table 't2', its subject for 't1'"),
        (stored(batch(table_version=0)), "the batch has no table version"),
    ],
)
def test_unusable_messages_are_poison_with_a_reason(message: StoredMessage, reason: str) -> None:
    with pytest.raises(PoisonMessageError) as caught:
        decode(message, NAMES)
    assert caught.value.reason.startswith(reason)


def finished(
    game: str,
    totals: list[int],
    *,
    left: dict[int, float] | None = None,
    bots: tuple[int, ...] = (),
    reason: str = "",
) -> FinishedGame:
    left = left or {}
    return FinishedGame(
        table_id="t",
        game=game,
        sequence=1,
        at=AT,
        totals=tuple(totals),
        seats=tuple(
            RatedSeat(f"p{seat}", "bot" if seat in bots else "person", left.get(seat))
            for seat in range(len(totals))
        ),
        ended_early=bool(reason),
        end_reason=reason,
        rated=True,
    )


def test_a_leaver_loses_five_n_times_the_share_played() -> None:
    changes = seat_changes(finished("whist", [120, 90, 75, 60], left={3: 0.5}), [1500.0] * 4)
    assert [c.change for c in changes] == pytest.approx([20, 0, -8, -30])
    assert [c.leaver_deduction for c in changes] == [0, 0, 0, 10]


def test_everyone_else_left_needs_exactly_one_person_still_seated() -> None:
    game = finished("whist", [0, 0, 0], left={0: 0.2, 1: 0.5}, reason="everyone_else_left")
    assert [c.change for c in seat_changes(game, [1500.0] * 3)] == [-15, -15, 15]
    nobody = finished("whist", [0, 0, 0], left={0: 0.2, 1: 0.5}, bots=(2,), reason="x")
    with pytest.raises(PoisonMessageError, match="no rating rule"):
        seat_changes(nobody, [1500.0] * 3)
    nobody = finished(
        "whist", [0, 0, 0], left={0: 0.2, 1: 0.5}, bots=(2,), reason="everyone_else_left"
    )
    with pytest.raises(PoisonMessageError, match="exactly one person"):
        seat_changes(nobody, [1500.0] * 3)
    with pytest.raises(PoisonMessageError, match="hearts game ended early"):
        seat_changes(finished("hearts", [0, 0, 0, 0], reason="everyone_else_left"), [1500.0] * 4)


@pytest.mark.parametrize(("recorded", "rated"), [(None, True), (True, True), (False, False)])
def test_a_game_is_rated_as_its_table_created_says_and_a_log_without_it_is(
    recorded: bool | None, rated: bool
) -> None:
    """None: a log written before TableCreated held the decision, when every game was rated."""
    players = people("ann", "bob", "cy", "dee")
    quick = {"quick": "true"}  # rated or not, only the log says, whatever its options
    log = TableLog("hearts", players, seed=5, options=quick, rated=recorded).play()
    folded = projection.Projection({})
    for table_batch in log.batches:
        subject = NAMES.table_subject(log.table_id)
        assert folded.apply(decode(stored(table_batch, subject), NAMES))
    assert folded.tables[log.table_id].game.rated is rated
    assert [game.rated for game in folded.finished] == [rated]


def test_a_tied_belote_end_cannot_be_rated() -> None:
    with pytest.raises(PoisonMessageError, match="no rating for this game's end"):
        seat_changes(finished("belote", [500, 500, 500, 500]), [1500.0] * 4)


@pytest.mark.parametrize(
    "token",
    ["", "!!!", "e30", "W10", "eyJraW5kIjoiZ2FtZXMifQ", "x" * 2000],
    ids=["empty", "not-base64", "no-kind", "a-list", "other-kind", "too-long"],
)
def test_page_tokens_not_made_for_the_request_are_refused(token: str) -> None:
    with pytest.raises(BadPageTokenError):
        decode_page_token(token, "leaderboard")


def test_settings_read_names_and_refuse_bad_values() -> None:
    env = {
        "NATS_URL": "nats://nats:4222",
        "DATABASE_URL": "postgresql://scoring@db/cardtable",
        "LOG_VERIFYING_KEYS": BatchSigner.generate().public_text(),
        "EVENT_PREFIX": "DEV",
        "SCORING_BATCH_SIZE": "64",
    }
    read = ScoringSettings.from_env(env)
    assert read.consumer.log == LogNames("DEV")
    assert (read.consumer.log.stream, read.consumer.log.table_subject("1")) == (
        "DEV_EVENTS",
        "DEV.table.1",
    )
    assert (read.consumer.consumer_name, read.consumer.schema) == ("scoring", "scoring")
    assert read.consumer.batch_size == 64
    with pytest.raises(SettingsError) as caught:
        ScoringSettings.from_env(
            {
                "EVENT_PREFIX": "a b",
                "SCORING_SCHEMA": "Bad-Schema",
                "SCORING_ACK_WAIT_SECONDS": "0",
            }
        )
    problems = "\n".join(caught.value.problems)
    for variable in (
        "NATS_URL",
        "DATABASE_URL",
        "EVENT_PREFIX",
        "SCORING_SCHEMA",
        "SCORING_ACK_WAIT_SECONDS",
    ):
        assert variable in problems


def test_every_handler_name_is_a_projection_method() -> None:
    for name in [*projection.EVENT_HANDLERS.values(), *projection.FACT_HANDLERS.values()]:
        assert callable(getattr(projection.Projection, name))
    assert set(projection.EVENT_HANDLERS) <= set(events_pb2.Event.DESCRIPTOR.fields_by_name)


def test_a_projection_is_freed_as_soon_as_its_transaction_lets_go() -> None:
    """No reference cycle: a projection and the rows it holds go when the last reference
    does, not at the garbage collector's next full pass."""
    created = events_pb2.Event(table_created=events_pb2.TableCreated(game="hearts", seats=4))
    seated = events_pb2.Event(
        player_seated=events_pb2.PlayerSeated(
            seat=0, player_id="p1", kind=events_pb2.PLAYER_KIND_PERSON
        )
    )
    folded = projection.Projection({})
    assert folded.apply(decode(stored(batch(events=[created])), NAMES))
    assert folded.apply(decode(stored(batch(table_version=2, events=[seated])), NAMES))
    assert len(list(folded.changed())) >= 2
    gone = weakref.ref(folded)
    collector_was_on = gc.isenabled()
    gc.disable()
    try:
        del folded
        assert gone() is None
    finally:
        if collector_was_on:
            gc.enable()


class _PendingMessage:
    """What the consumer reads of a fetched message: how many wait behind it."""

    def __init__(self, pending: int) -> None:
        self.metadata = SimpleNamespace(num_pending=pending)


class _FollowUpTimesOut:
    """A pull subscription whose first fetch brings one message with more waiting, and whose
    follow-up fetch for those times out (as nats-py reports a 408 or 409 status too)."""

    def __init__(self) -> None:
        self.first = _PendingMessage(pending=5)
        self.asked: list[int] = []

    async def fetch(self, batch: int, timeout: float) -> list[_PendingMessage]:  # noqa: ASYNC109
        self.asked.append(batch)
        if len(self.asked) > 1:
            raise nats.errors.TimeoutError
        return [self.first]


async def test_a_follow_up_fetch_that_times_out_keeps_the_message_in_hand() -> None:
    consumer_settings = ConsumerSettings(
        log=NAMES, consumer_name="scoring", schema="scoring", batch_size=64, ack_wait_seconds=30
    )
    consumer = ProjectionConsumer(
        None,  # type: ignore[arg-type]  # the fetch alone is under test
        None,  # type: ignore[arg-type]
        consumer_settings,
        ProjectionMetrics(CollectorRegistry()),
        reader=None,  # type: ignore[arg-type]
    )
    subscription = _FollowUpTimesOut()
    fetched = await consumer._fetch(subscription)  # type: ignore[arg-type]
    assert subscription.asked == [1, 5]
    assert fetched == [subscription.first]


def delivered(*sequences: int) -> list[StoredMessage]:
    return [
        StoredMessage(sequence=sequence, subject="t.table.x", data=b"", headers={},
                      stored_at=datetime.now(UTC))
        for sequence in sequences
    ]  # fmt: skip


def test_a_lost_delivery_binds_again_but_a_gap_the_stream_has_is_let_through() -> None:
    names = LogNames.from_prefix("t")
    settings = ConsumerSettings(names, "scoring", "scoring", batch_size=10, ack_wait_seconds=5)
    consumer = ProjectionConsumer(None, None, settings, None, reader=None)  # type: ignore[arg-type]
    consumer._contiguous, consumer._position = True, 3

    consumer._check_delivery(delivered(2, 3, 4, 5))  # redelivered, then the next ones: fine
    with pytest.raises(DeliveryLostError, match="1 message"):
        consumer._check_delivery(delivered(5, 6))  # 4 never came
    # Bound again from position 3, the consumer delivers 5 first once more: the stream has no 4.
    consumer._check_delivery(delivered(5, 6))


def test_a_jetstream_time_is_read_to_the_nanosecond_and_rounded_as_a_delivery_is() -> None:
    assert nanoseconds_from_rfc3339("1970-01-01T00:00:01.000000002Z") == 1_000_000_002
    assert nanoseconds_from_rfc3339("2026-12-02T20:37:35Z") == 1_796_243_855_000_000_000
    assert nanoseconds_from_rfc3339("2026-12-02T20:37:35.4Z") == 1_796_243_855_400_000_000
    nanoseconds = nanoseconds_from_rfc3339("2026-12-02T20:37:35.405861934Z")
    assert stored_at_from_nanoseconds(nanoseconds) == datetime(
        2026, 12, 2, 20, 37, 35, 405862, tzinfo=UTC
    )
