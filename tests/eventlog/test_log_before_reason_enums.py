"""A log written before the reasons were enums still reads.

Before ``handover_reason``, ``request_reason`` and ``end_reason`` existed, ``SeatHandedToBot``,
``BotSeatRequested`` and ``GameFinished`` held their reason as text only. Such a log is built
here from the form written now, by clearing the enums: the writer still writes the same texts,
so what is left is byte for byte what the previous version wrote. Every reader takes the
reasons through one upcaster (platform/event_upcasting.py), and reads the old form as the new.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cardtable.eventlog.records import record_from_batches
from cardtable.platform.event_upcasting import (
    END_TEXTS,
    HANDOVER_TEXTS,
    REQUEST_TEXTS,
    end_reason,
    handover_reason,
    request_reason,
    upcast_event,
    with_text,
)
from cardtable.platform.log_names import LogNames
from cardtable.scoring_service.messages import StoredMessage, decode
from cardtable.scoring_service.projection import Projection
from cardtable.scoring_service.rows import GamePlayerRow, GameRow
from cardtable_api.events.v1 import events_pb2
from tests.scoring_service.event_log import TableLog, bot, people, public

HANDED = events_pb2.SeatHandedToBot
REQUESTED = events_pb2.BotSeatRequested
FINISHED = events_pb2.GameFinished
#: The enum field beside each event's ``reason`` text, and the texts it is written as.
ENUM_FIELDS = {
    "seat_handed_to_bot": "handover_reason",
    "bot_seat_requested": "request_reason",
    "game_finished": "end_reason",
}
TEXTS: dict[str, dict[Any, str]] = {
    "seat_handed_to_bot": dict(HANDOVER_TEXTS),
    "bot_seat_requested": dict(REQUEST_TEXTS),
    "game_finished": dict(END_TEXTS),
}
NAMES = LogNames.from_prefix("cardtable")
STORED_AT = datetime(2026, 12, 2, tzinfo=UTC)
RECORDED = Path(__file__).parent.parent / "fixtures" / "log_before_typed_facts.json"


def _whist_everyone_else_left() -> TableLog:
    """Whist: a computer player fills seat 2 at the start, bob leaves during the game, and
    ann, the one person still seated, wins at once."""
    log = TableLog("whist", people("ann", "bob", "cy"), seed=3)
    log.open()
    fill = log.batches[-1]  # cy's seat stays empty: the table fills it instead
    bot_id = f"bot:{log.table_id}:2"
    del fill.events[:]
    fill.events.extend(
        [
            public(
                seat_handed_to_bot=with_text(
                    HANDED(seat=2, player_id=bot_id, handover_reason=HANDED.REASON_FILL)
                )
            ),
            public(
                bot_seat_requested=with_text(
                    REQUESTED(seat=2, request_reason=REQUESTED.REASON_FILL, created_by="ann")
                )
            ),
        ]
    )
    log.players[2] = bot(bot_id)
    log.occupant[2] = bot_id
    log.start()
    log.play_deals(2)
    log.leave(seat=1)
    log.append(
        public(
            bot_seat_requested=with_text(
                REQUESTED(seat=1, request_reason=REQUESTED.REASON_HANDOVER, turn=40)
            )
        )
    )
    log.end_everyone_else_left()
    return log


def _hearts_with_timeouts() -> TableLog:
    """Hearts: dee's turn times out three times in a row, and the game is played out."""
    log = TableLog("hearts", people("ann", "bob", "cy", "dee"), seed=4, options={"quick": "true"})
    log.open_and_start()
    log.play_steps(20)
    log.time_out(seat=3)
    log.play_to_end()
    return log


@dataclass
class Forms:
    """One table's batches as written now, and as the version before the enums wrote them."""

    table_id: str
    new: list[events_pb2.EventBatch]
    old: list[events_pb2.EventBatch]


def _old_form(batch: events_pb2.EventBatch) -> events_pb2.EventBatch:
    old = events_pb2.EventBatch()
    old.CopyFrom(batch)
    for event in old.events:
        which = event.WhichOneof("body")
        if which in ENUM_FIELDS:
            getattr(event, which).ClearField(ENUM_FIELDS[which])
    return old


@pytest.fixture(scope="module", params=["whist", "hearts"])
def forms(request: pytest.FixtureRequest) -> Forms:
    log = _whist_everyone_else_left() if request.param == "whist" else _hearts_with_timeouts()
    return Forms(log.table_id, log.batches, [_old_form(batch) for batch in log.batches])


def _events(batches: list[events_pb2.EventBatch]) -> list[events_pb2.Event]:
    return [event for batch in batches for event in batch.events]


def _reasons(batches: list[events_pb2.EventBatch]) -> list[tuple[str, int, str]]:
    """Each reason in the batches: the event's field, its enum and its text."""
    found = []
    for event in _events(batches):
        which = event.WhichOneof("body")
        if which in ENUM_FIELDS:
            body = getattr(event, which)
            found.append((which, getattr(body, ENUM_FIELDS[which]), body.reason))
    return found


def test_the_writer_writes_each_reason_as_enum_and_as_text(forms: Forms) -> None:
    written = _reasons(forms.new)

    assert written
    assert all(reason and text == TEXTS[which][reason] for which, reason, text in written)
    assert [(which, 0, text) for which, _, text in written] == _reasons(forms.old)


def test_old_events_read_as_the_events_written_now(forms: Forms) -> None:
    new = _events(forms.new)

    assert [upcast_event(event) for event in _events(forms.old)] == new
    assert all(upcast_event(event) is event for event in new)


def _project(table_id: str, batches: list[events_pb2.EventBatch]) -> list[Any]:
    folded = Projection({})
    subject = NAMES.table_subject(table_id)
    for sequence, batch in enumerate(batches, start=1):
        message = StoredMessage(
            sequence, subject, batch.SerializeToString(), {"Cardtable-Schema": "1"}, STORED_AT
        )
        assert folded.apply(decode(message, NAMES))
    return [*folded.changed(), *folded.finished]


def test_the_projection_folds_the_old_form_as_the_new(forms: Forms) -> None:
    rows = _project(forms.table_id, forms.old)

    assert rows == _project(forms.table_id, forms.new)
    (game,) = [row for row in rows if isinstance(row, GameRow)]
    left = {
        row.seat for row in rows if isinstance(row, GamePlayerRow) and row.left_progress is not None
    }
    if game.game == "whist":
        assert (game.ended_early, game.end_reason, left) == (True, "everyone_else_left", {1})
    else:
        assert (game.ended_early, game.end_reason, left) == (False, "", {3})


def test_the_game_record_reads_the_old_form_as_the_new(forms: Forms) -> None:
    record = record_from_batches(forms.table_id, forms.old)

    assert record == record_from_batches(forms.table_id, forms.new)
    if record["game"] == "whist":
        assert [seat["kind"] for seat in record["seats"]] == ["person", "person", "bot"]
        assert record["result"]["ended_early"] == "everyone_else_left"
    else:
        assert record["result"]["over"] and "ended_early" not in record["result"]


#: Every text a version of the table service wrote, and the enum it reads as. Written out, not
#: taken from the upcaster's tables: these texts are in logs already, whatever the code says.
OLD_TEXTS = [
    ("seat_handed_to_bot", "left", HANDED.REASON_LEFT),
    ("seat_handed_to_bot", "timeouts", HANDED.REASON_TIMEOUTS),
    ("seat_handed_to_bot", "fill", HANDED.REASON_FILL),
    ("bot_seat_requested", "fill", REQUESTED.REASON_FILL),
    ("bot_seat_requested", "handover", REQUESTED.REASON_HANDOVER),
    ("bot_seat_requested", "single_move", REQUESTED.REASON_SINGLE_MOVE),
    ("game_finished", "", FINISHED.REASON_GAME_OVER),
    ("game_finished", "everyone_else_left", FINISHED.REASON_EVERYONE_ELSE_LEFT),
]
READERS: dict[str, Any] = {
    "seat_handed_to_bot": handover_reason,
    "bot_seat_requested": request_reason,
    "game_finished": end_reason,
}


@pytest.mark.parametrize(("which", "text", "reason"), OLD_TEXTS)
def test_each_old_text_reads_as_its_enum(which: str, text: str, reason: int) -> None:
    old = events_pb2.Event(**{which: {"reason": text}})
    if text == "everyone_else_left":
        old.game_finished.ended_early = True

    upcast = upcast_event(old)

    assert getattr(getattr(upcast, which), ENUM_FIELDS[which]) == reason
    assert getattr(upcast, which).reason == text
    assert READERS[which](getattr(old, which)) == reason


@pytest.mark.parametrize("which", list(ENUM_FIELDS))
def test_a_text_no_version_wrote_reads_as_unspecified_and_is_left_as_it_is(which: str) -> None:
    odd = events_pb2.Event(**{which: {"reason": "gremlins"}})

    assert READERS[which](getattr(odd, which)) == 0
    assert upcast_event(odd) is odd


def test_an_early_end_without_text_is_not_read_as_a_game_played_out() -> None:
    assert end_reason(FINISHED(ended_early=True)) == FINISHED.REASON_UNSPECIFIED
    assert end_reason(FINISHED()) == FINISHED.REASON_GAME_OVER


def test_the_enum_wins_over_the_text_and_the_text_is_written_from_it() -> None:
    both = events_pb2.Event(
        seat_handed_to_bot=HANDED(reason="fill", handover_reason=HANDED.REASON_LEFT)
    )

    assert upcast_event(both).seat_handed_to_bot.reason == "left"


def test_a_writer_that_sets_no_enum_is_stopped() -> None:
    with pytest.raises(ValueError, match="handover_reason 0, which has no text"):
        with_text(HANDED(seat=1, reason="left"))


def test_a_game_finished_recorded_by_an_older_version_reads_as_played_out() -> None:
    """The fixture of tests/eventlog/test_log_before_typed_facts.py, recorded before the enums."""
    fixture = json.loads(RECORDED.read_text())
    finished = [
        event
        for message in fixture["messages"]
        for event in events_pb2.EventBatch.FromString(base64.b64decode(message["data"])).events
        if event.HasField("game_finished")
    ]

    assert finished and all(not event.game_finished.end_reason for event in finished)
    assert {upcast_event(event).game_finished.end_reason for event in finished} == {
        FINISHED.REASON_GAME_OVER
    }
