"""The lobby's commands: create a table, take a seat, or be seated at a table like the one asked
for (quick seat), each within the per-player quotas the lobby counts (quotas.py).

The application runs each command (idempotent by command id, optimistic concurrency); this
module decides which tables a command goes to and holds it to the quotas. The lobby counts a
table or a seat once its command is stored, so one player's counted commands run one at a
time on a replica (:class:`~cardtable.table_service.quotas.PlayerTurns`): concurrent ones
would all pass the same count. The quota checks run inside the command's decision, after the
application has found a retry already applied, so a retried command is answered, not refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass

from cardtable.platform.tokens import Principal
from cardtable.table_service.application import Outcome, TableApplication
from cardtable.table_service.commands import Decision, Table
from cardtable.table_service.errors import (
    BadRequestError,
    ConcurrencyConflictError,
    RuleViolationError,
    TableNotFoundError,
)
from cardtable.table_service.lobby_index import TableSummary
from cardtable.table_service.quotas import (
    DEFAULT_QUOTAS,
    PlayerTurns,
    QuotaSettings,
    check_open_tables,
    check_seats,
)
from cardtable.table_service.state import FINISHED, OPEN, RUNNING, TableState, apply_batch
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

#: Each setting a new table's request leaves unset (docs/rules.md: timer 30 s, fill after 20 s).
DEFAULT_SETTINGS = events_pb2.TableSettings(
    turn_timer_ms=30_000, fill_with_bots=True, fill_wait_ms=20_000, bot_strategy="rules"
)


def settings_with_defaults(requested: events_pb2.TableSettings) -> events_pb2.TableSettings:
    """The request's settings, with ``DEFAULT_SETTINGS`` for each field it left unset.

    The fields have presence, so a timer of 0 (off) or fill set to false is kept as asked,
    while a request that only names a strategy still gets the timer and the fill.

    >>> settings_with_defaults(events_pb2.TableSettings(turn_timer_ms=0)).turn_timer_ms
    0
    >>> settings_with_defaults(events_pb2.TableSettings()).fill_wait_ms
    20000
    """
    resolved = events_pb2.TableSettings()
    resolved.CopyFrom(DEFAULT_SETTINGS)
    resolved.MergeFrom(requested)
    return resolved


def table_asked_for(
    game: str,
    seats: int,
    options: Mapping[str, str],
    settings: events_pb2.TableSettings | None = None,
) -> events_pb2.TableCreated:
    """The table a request describes: the game's name as the rules service knows it, and the
    default for each setting left unset."""
    return events_pb2.TableCreated(
        game=game.strip().lower(),
        seats=seats,
        options=common_pb2.GameOptions(values=options),
        settings=settings_with_defaults(
            events_pb2.TableSettings() if settings is None else settings
        ),
    )


@dataclass(frozen=True)
class Seating:
    """Where a player was seated: the table, the seat, and the table's version after it."""

    table_id: str
    seat: int
    version: int


def own_seat(table: Table, principal: Principal) -> int:
    """The seat ``principal`` plays at ``table`` after a join."""
    seat = table.state.seat_of(principal.player_id)
    if seat is None:
        raise RuleViolationError("you have no seat at this table")
    return seat


def counts_as_open(summary: TableSummary) -> bool:
    """A table not yet started, or one computer players alone play: both count against their
    creator's open tables (a game of computer players only costs the bot service its seats and
    serves nobody at the table, so a creator may not start them without bound)."""
    return summary.status == OPEN or (
        summary.status == RUNNING
        and summary.bot_seats is not None
        and summary.bot_seats >= summary.seats
    )


def open_tables_of(player_id: str, summaries: Iterable[TableSummary]) -> int:
    """How many of ``summaries`` count as ``player_id``'s open tables."""
    return sum(
        1 for summary in summaries if summary.created_by == player_id and counts_as_open(summary)
    )


def matching_tables(
    open_tables: Iterable[TableSummary], wanted: events_pb2.TableCreated
) -> list[TableSummary]:
    """The open tables with a free seat that a quick seat for ``wanted`` may join, in the
    order given (the lobby's: oldest first). ``wanted.seats`` 0 takes any number of seats;
    the options must be the same, so a player is never seated at a variant they did not ask
    for."""
    options = dict(wanted.options.values)
    return [
        summary
        for summary in open_tables
        if summary.game == wanted.game
        and summary.seats_taken < summary.seats
        and (not wanted.seats or summary.seats == wanted.seats)
        and summary.options == options
    ]


class Lobby:
    """The lobby's commands on one replica, shared by all calls."""

    def __init__(
        self,
        app: TableApplication,
        quotas: QuotaSettings = DEFAULT_QUOTAS,
        quota_checked: Callable[[str], None] = lambda check: None,
    ) -> None:
        """``quota_checked`` is told of each quota a command is checked against (metrics)."""
        self._app = app
        self._quotas = quotas
        self._quota_checked = quota_checked
        self._turns = PlayerTurns()

    @property
    def players_in_flight(self) -> int:
        """Players with a counted command running (none once every command has ended)."""
        return self._turns.players

    # -- queries ------------------------------------------------------------------------------
    def tables(self, status: str = "", game: str = "") -> list[TableSummary]:
        """The lobby's tables, oldest first: those with ``status`` (default: open and
        running), of ``game`` when given."""
        if status not in ("", OPEN, RUNNING, FINISHED):
            raise BadRequestError("status is 'open', 'running', 'finished' or empty")
        index = self._app.index
        statuses = (status,) if status else (OPEN, RUNNING)
        return [
            summary
            for summary in (index.tables(*statuses) if index else [])
            if not game or summary.game == game
        ]

    # -- commands -----------------------------------------------------------------------------
    async def create_table(
        self,
        principal: Principal,
        command_id: str,
        wanted: events_pb2.TableCreated,
        *,
        seat: int | None = None,
        fingerprint: bytes = b"",
    ) -> Outcome:
        """A new table as ``wanted`` (see :func:`table_asked_for`), within the creator's open
        tables; with ``seat``, the creator sits there in the same batch, within their seats."""
        async with self._counted(principal):
            return await self._create(principal, command_id, wanted, fingerprint, seat)

    async def join_table(
        self,
        principal: Principal,
        table_id: str,
        command_id: str,
        seat: int | None,
        *,
        fingerprint: bytes = b"",
    ) -> Seating:
        """``principal`` seated at ``table_id`` (at ``seat``, or the first free one), within
        their seats."""
        async with self._counted(principal):
            outcome = await self._app.execute(
                table_id,
                command_id,
                lambda table: self._join(table, principal, seat),
                fingerprint=fingerprint,
            )
        return _seating(outcome, principal)

    async def quick_seat(
        self, principal: Principal, command_id: str, wanted: events_pb2.TableCreated
    ) -> Seating:
        """A seat at an open table like ``wanted`` (see :func:`matching_tables`), or at a new
        one as ``wanted`` when none has room."""
        async with self._counted(principal):
            earlier = await self._earlier_seating(principal, f"{command_id}:join")
            if earlier is not None:
                return earlier
            index = self._app.index
            candidates = matching_tables(index.tables(OPEN) if index else [], wanted)
            for summary in candidates:
                try:
                    outcome = await self._app.execute(
                        summary.table_id,
                        f"{command_id}:join",
                        lambda table: self._join(table, principal, None),
                    )
                except (RuleViolationError, ConcurrencyConflictError, TableNotFoundError):
                    continue  # filled up or started meanwhile: try the next one
                return _seating(outcome, principal)
            made = await self._create(principal, f"{command_id}:create", wanted, b"")
            outcome = await self._app.execute(
                made.table.state.table_id,
                f"{command_id}:join",
                lambda table: self._join(table, principal, None),
            )
            return _seating(outcome, principal)

    async def _earlier_seating(self, principal: Principal, join_id: str) -> Seating | None:
        """The seat an earlier try of this quick seat took, if one did: a retry gets the first
        answer even once that table has filled or started and is no candidate any more."""
        index = self._app.index
        if index is None or not index.seats_held(principal.player_id):
            return None  # the common case: no seat anywhere, so no earlier try took one
        for summary in index.tables(OPEN, RUNNING):
            if principal.player_id not in summary.people:
                continue
            table = await self._app.read(summary.table_id)
            if join_id in table.state.command_ids:
                return _seating(Outcome(table, None, already_applied=True), principal)
        return None

    # -- quotas -------------------------------------------------------------------------------
    def _applies_to(self, principal: Principal) -> bool:
        """Whether the lobby's quotas hold ``principal`` (the bot service, which plays many
        seats under one id, is bounded by its seats instead)."""
        return self._quotas.enabled and not principal.is_bot

    @contextlib.asynccontextmanager
    async def _counted(self, principal: Principal) -> AsyncIterator[None]:
        """Around a command that a lobby-counted quota checks: one per player at a time."""
        if not self._applies_to(principal):
            yield
            return
        async with self._turns.turn(principal.player_id):
            yield

    async def _create(
        self,
        principal: Principal,
        command_id: str,
        created: events_pb2.TableCreated,
        fingerprint: bytes,
        seat: int | None = None,
    ) -> Outcome:
        async def decide() -> Decision:
            self._check_open_tables(principal)
            made = await self._app.decider.create_table(principal, created)
            if seat is None:
                return made
            sat = await self._join(_as_made(made), principal, seat)
            return Decision(events=[*made.events, *sat.events], seat=sat.seat)

        return await self._app.create(command_id, decide, fingerprint=fingerprint)

    def _check_open_tables(self, principal: Principal) -> None:
        index = self._app.index
        if index is None or not self._applies_to(principal):
            return
        self._quota_checked("open_tables_per_player")
        open_tables = open_tables_of(
            principal.player_id,
            (summary for status in (OPEN, RUNNING) for summary in index.with_status(status)),
        )
        check_open_tables(principal.player_id, open_tables, self._quotas)

    async def _join(self, table: Table, principal: Principal, seat: int | None) -> Decision:
        """Seat ``principal``, within their quota of seats (computer players have none)."""
        index = self._app.index
        if (
            index is not None
            and self._applies_to(principal)
            and table.state.seat_of(principal.player_id) is None
        ):
            self._quota_checked("seats_per_player")
            check_seats(index.seats_held(principal.player_id), self._quotas)
        return await self._app.decider.join(table, principal, seat)


def _as_made(creation: Decision) -> Table:
    """The table a creation's events make, for deciding on it before they are stored (the
    creator's seat goes in the same batch)."""
    batch = events_pb2.EventBatch(events=creation.events, table_version=1)
    return Table(apply_batch(TableState(table_id=""), batch, sequence=0))


def _seating(outcome: Outcome, principal: Principal) -> Seating:
    table = outcome.table
    return Seating(table.state.table_id, own_seat(table, principal), table.state.version)
