"""Stepping through a record from one viewpoint, with only what that viewpoint saw.

A record's inputs (deck orders and actions) are re-applied with the engine's
:func:`~cardtable.engine.replay.replay`. After each input the session keeps what the viewpoint
may know: the facts whose audience includes it and the engine's ``observation(seat)``. The
viewpoint is one seat, a spectator (public facts only) or the open table (every seat's
observation and every fact). Nothing is read from the record's decks except by the engine
dealing them, so a seat's view can never hold another seat's hidden card.

>>> from cardtable.engine.registry import game_spec
>>> from cardtable.engine.record import RecordBuilder, load_record
>>> builder = RecordBuilder.start(game_spec("hearts"), 4, {"quick": True}, first_dealer=0)
>>> _ = builder.deal(builder.state.deck())
>>> steps = list(replay_steps(load_record(builder.to_json()), Viewpoint(seat=2)))
>>> [step.deal_number for step in steps], sorted(steps[0].observations)
([1], [2])
>>> steps[0].observations[2]["hand"][:3]
['3C', '7C', 'JC']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cardtable.engine.actions import Action, action_audience, parse_action
from cardtable.engine.errors import EngineError
from cardtable.engine.facts import DealScored, Fact, GameEnded, TrickWon, visible_to
from cardtable.engine.record import GameRecord
from cardtable.engine.replay import ActionInput, DealInput, GameInput, replay

#: Hands stay hidden until a game is over, in a terminal as on a page.
OPEN_ONLY_WHEN_OVER = (
    "all hands open (--open) only for a finished game, and this record's game is not "
    "over: use --seat N for one seat's view, or neither for a spectator's"
)


@dataclass(frozen=True)
class Viewpoint:
    """Whose eyes a replay uses: one ``seat``, a spectator (no seat), or ``open`` hands."""

    seat: int | None = None
    open: bool = False

    def __post_init__(self) -> None:
        if self.open and self.seat is not None:
            raise ValueError("a viewpoint is one seat or the open table, not both")

    @property
    def is_spectator(self) -> bool:
        return self.seat is None and not self.open

    def seats(self, players: int) -> tuple[int | None, ...]:
        """The seats whose observations the viewpoint reads (``None``: a spectator's)."""
        if self.open:
            return tuple(range(players))
        return (self.seat,)

    def sees_fact(self, fact: Fact) -> bool:
        return self.open or visible_to(fact, self.seat)

    def sees_action(self, seat: int, action: Action) -> bool:
        """Whether the action's details (the cards passed, given, put away) are visible."""
        audience = action_audience(action, seat)
        return self.open or audience is None or self.seat in audience

    def describe(self) -> str:
        if self.open:
            return "all hands open"
        if self.seat is None:
            return "spectator view (public information only)"
        return f"seat {self.seat}'s point of view"


@dataclass(frozen=True)
class ReplayStep:
    """One input re-applied, as the viewpoint saw it.

    ``action`` is ``None`` for a deal, and also when its details are hidden from the viewpoint
    (another seat's pass, discard or give); ``action_kind`` is public in every case, because
    everybody sees that a seat acted.
    """

    deal_index: int
    deal_number: int
    action_index: int  # -1 for the deal itself
    seat: int | None  # the seat that acted; None for the deal
    action_kind: str | None
    action: Action | None
    facts: tuple[Fact, ...]  # the facts the viewpoint may see, in the engine's order
    observations: Mapping[int | None, Mapping[str, Any]]  # after the input, per seat read

    @property
    def public(self) -> Mapping[str, Any]:
        """One observation, for the fields that are the same for every seat (phase, scores)."""
        return next(iter(self.observations.values()))

    @property
    def trick(self) -> TrickWon | None:
        return next((fact for fact in self.facts if isinstance(fact, TrickWon)), None)

    @property
    def deal_scored(self) -> DealScored | None:
        return next((fact for fact in self.facts if isinstance(fact, DealScored)), None)

    @property
    def game_ended(self) -> GameEnded | None:
        return next((fact for fact in self.facts if isinstance(fact, GameEnded)), None)


class ReplayError(Exception):
    """The engine refused an input: the record cannot be replayed past it (see ``audit``)."""

    def __init__(self, deal_number: int, where: str, reason: str) -> None:
        super().__init__(f"deal {deal_number}, {where}: {reason}")
        self.deal_number = deal_number
        self.where = where
        self.reason = reason


def replay_steps(record: GameRecord, viewpoint: Viewpoint) -> Iterator[ReplayStep]:
    """Every input of ``record`` re-applied, as :class:`ReplayStep` seen from ``viewpoint``.

    Raises :class:`ReplayError` at the first input the engine refuses; the steps before it
    have been yielded.
    """
    if viewpoint.seat is not None and not 0 <= viewpoint.seat < record.players:
        raise ValueError(f"there is no seat {viewpoint.seat}: seats are 0 to {record.players - 1}")
    seats = viewpoint.seats(record.players)
    position = (0, -1)

    def inputs() -> Iterator[GameInput]:
        # Not GameRecord.inputs(): the position must be known before an action text is read,
        # so that an unreadable one is reported where it is.
        nonlocal position
        for deal_index, deal in enumerate(record.deals):
            position = (deal_index, -1)
            yield DealInput(deal.deck)
            for action_index, (seat, text) in enumerate(deal.actions):
                position = (deal_index, action_index)
                yield ActionInput(seat, parse_action(text))

    steps = replay(record.spec, record.players, record.options, record.first_dealer, inputs())
    while True:
        try:
            state, step, facts = next(steps)
        except StopIteration:
            return
        except EngineError as error:
            raise _stopped(record, position, str(error)) from error
        deal_index, action_index = position
        acting = step if isinstance(step, ActionInput) else None
        yield ReplayStep(
            deal_index=deal_index,
            deal_number=state.deal_number,
            action_index=action_index,
            seat=acting.seat if acting else None,
            action_kind=acting.action.kind if acting else None,
            action=(
                acting.action
                if acting and viewpoint.sees_action(acting.seat, acting.action)
                else None
            ),
            facts=tuple(fact for fact in facts if viewpoint.sees_fact(fact)),
            observations={seat: state.observation(seat) for seat in seats},
        )


def _stopped(record: GameRecord, position: tuple[int, int], reason: str) -> ReplayError:
    deal_index, action_index = position
    deal = record.deals[deal_index]
    if action_index < 0:
        return ReplayError(deal.number, "the deal", reason)
    seat, text = deal.actions[action_index]
    return ReplayError(deal.number, f"action {action_index + 1} (seat {seat}: {text})", reason)
