"""The one reading of events in the forms the log held before, for every reader of the log.

Two things were written differently once:

- facts, as a kind and a Struct before typed facts (read by :mod:`fact_upcasting`);
- the reasons of ``SeatHandedToBot``, ``BotSeatRequested`` and ``GameFinished``, as text only
  (``"left"``, ``"handover"``, ``"everyone_else_left"``) before each had an enum field beside
  its ``reason``: ``handover_reason``, ``request_reason`` and ``end_reason``.

The writers set the enum and still write the text, from the tables below through
:func:`with_text`, so that readers built before the enums (a service not yet upgraded, a tool
outside this repository) read the same reason. Readers read the enum, and only through this
module: :func:`upcast_event` gives an event as the writer writes it now, whatever form the
log holds, and :func:`handover_reason`, :func:`request_reason` and :func:`end_reason` read one
reason where a reader holds the message alone. No other module reads a ``reason`` text.

>>> old = events_pb2.Event(seat_handed_to_bot=events_pb2.SeatHandedToBot(seat=2, reason="left"))
>>> upcast_event(old).seat_handed_to_bot.handover_reason == events_pb2.SeatHandedToBot.REASON_LEFT
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from cardtable.platform.fact_upcasting import typed_event
from cardtable_api.events.v1 import events_pb2

Handover = events_pb2.SeatHandedToBot
Request = events_pb2.BotSeatRequested
Finished = events_pb2.GameFinished

#: The text each reason was logged as before its enum, and is still written as. Frozen: these
#: texts are in old logs, and in what readers built before the enums compare with.
HANDOVER_TEXTS: dict[Handover.Reason.ValueType, str] = {
    Handover.REASON_LEFT: "left",
    Handover.REASON_TIMEOUTS: "timeouts",
    Handover.REASON_FILL: "fill",
}
REQUEST_TEXTS: dict[Request.Reason.ValueType, str] = {
    Request.REASON_FILL: "fill",
    Request.REASON_HANDOVER: "handover",
    Request.REASON_SINGLE_MOVE: "single_move",
}
#: A game played to its end had no text (""); the text of an early end is the rule's name, as
#: game records (``result.ended_early``) and the scoring service's ``end_reason`` give it.
END_TEXTS: dict[Finished.Reason.ValueType, str] = {
    Finished.REASON_GAME_OVER: "",
    Finished.REASON_EVERYONE_ELSE_LEFT: "everyone_else_left",
}

_HANDOVERS = {text: reason for reason, text in HANDOVER_TEXTS.items()}
_REQUESTS = {text: reason for reason, text in REQUEST_TEXTS.items()}
_EARLY_ENDS = {text: reason for reason, text in END_TEXTS.items() if text}

Reasoned = TypeVar("Reasoned", Handover, Request, Finished)


def handover_reason(handed: Handover) -> Handover.Reason.ValueType:
    """Why the seat went to a computer player, whichever form was written; unspecified for a
    text no version wrote."""
    if handed.handover_reason != Handover.REASON_UNSPECIFIED:
        return handed.handover_reason
    return _HANDOVERS.get(handed.reason, Handover.REASON_UNSPECIFIED)


def request_reason(request: Request) -> Request.Reason.ValueType:
    """What the table asks of the bot service, whichever form was written."""
    if request.request_reason != Request.REASON_UNSPECIFIED:
        return request.request_reason
    return _REQUESTS.get(request.reason, Request.REASON_UNSPECIFIED)


def end_reason(finished: Finished) -> Finished.Reason.ValueType:
    """Why the game ended, whichever form was written. Before the enum a game played to its
    end had no text, and only an early end had one."""
    if finished.end_reason != Finished.REASON_UNSPECIFIED:
        return finished.end_reason
    if finished.reason:
        return _EARLY_ENDS.get(finished.reason, Finished.REASON_UNSPECIFIED)
    return Finished.REASON_UNSPECIFIED if finished.ended_early else Finished.REASON_GAME_OVER


@dataclass(frozen=True)
class _Reason:
    """Where one event keeps its reason: the enum field, its texts, and how to read it."""

    message: type[Handover | Request | Finished]
    field: str
    texts: Mapping[Any, str]
    read: Callable[[Any], int]


#: By the event's field in ``Event.body``.
_REASONS: dict[str, _Reason] = {
    "seat_handed_to_bot": _Reason(Handover, "handover_reason", HANDOVER_TEXTS, handover_reason),
    "bot_seat_requested": _Reason(Request, "request_reason", REQUEST_TEXTS, request_reason),
    "game_finished": _Reason(Finished, "end_reason", END_TEXTS, end_reason),
}
_BY_MESSAGE = {where.message.DESCRIPTOR.full_name: where for where in _REASONS.values()}


def with_text(message: Reasoned) -> Reasoned:
    """``message`` (changed in place) with its deprecated ``reason`` text written from its
    enum, which the writer must have set: the one way a writer fills the text."""
    where = _BY_MESSAGE[message.DESCRIPTOR.full_name]
    reason = getattr(message, where.field)
    if reason not in where.texts:
        raise ValueError(
            f"{message.DESCRIPTOR.name} written with {where.field} {reason}, which has no text"
        )
    message.reason = where.texts[reason]
    return message


def upcast_event(event: events_pb2.Event) -> events_pb2.Event:
    """``event`` as the writer writes it now: its fact typed, and its reason's enum and text
    both set (the same object when it already is; a reason no version wrote stays as it is)."""
    event = typed_event(event)
    which = event.WhichOneof("body")
    where = _REASONS.get(which or "")
    if which is None or where is None:
        return event
    body = getattr(event, which)
    reason = where.read(body)
    current = getattr(body, where.field) == reason and body.reason == where.texts.get(reason)
    if reason not in where.texts or current:
        return event
    upcast = events_pb2.Event()
    upcast.CopyFrom(event)
    setattr(getattr(upcast, which), where.field, reason)
    with_text(getattr(upcast, which))
    return upcast
