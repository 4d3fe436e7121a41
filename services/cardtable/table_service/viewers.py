"""What a viewer may see of a table: whose seat's cards, and which of its events.

Another seat's cards never reach a viewer: a seat is shown only to the player who holds it
(or the computer player's token for it), and every event carries its audience (events.py).
``GetTable``, ``WatchTurns`` and ``WatchTable`` all ask here.
"""

from __future__ import annotations

from cardtable.platform.event_upcasting import upcast_event
from cardtable.platform.tokens import Principal
from cardtable.table_service.application import TableApplication
from cardtable.table_service.commands import Table
from cardtable.table_service.errors import (
    BadRequestError,
    GameStateLostError,
    LogTamperedError,
    PermissionDeniedError,
)
from cardtable.table_service.state import visible
from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2


def holds_seat(table: Table, seat: int, principal: Principal) -> bool:
    """Whether ``principal`` plays ``seat`` (a computer player's token plays the one bot seat
    it names)."""
    occupant = table.state.seats[seat]
    if occupant.is_bot:
        return principal.plays_bot_seat(table.state.table_id, seat)
    return occupant.player_id == principal.player_id and not principal.is_bot


def viewer_seat(table: Table, seat: int, principal: Principal) -> int:
    """The seat whose cards ``principal`` asked to see, which must be their own."""
    if not 0 <= seat < table.state.seat_count:
        raise BadRequestError(f"there is no seat {seat} at this table")
    if holds_seat(table, seat, principal):
        return seat
    raise PermissionDeniedError(f"you may only view your own seat, not seat {seat}")


async def view_of(
    app: TableApplication, table: Table, seat: int | None
) -> tuple[views_pb2.SeatView, common_pb2.GameStatus]:
    """What ``seat`` (a spectator: None) sees of the table's game, and the game's status."""
    assert table.game_state is not None
    cached = table.cached_view(seat) if seat is not None else None
    if cached is not None and table.game_status is not None:
        return cached, table.game_status
    held = table.game_state
    request = rules_pb2.GetViewRequest(state=held, typed_view=True)
    if seat is not None:
        request.seat = seat
    try:
        reply = await app.rules.get_view(request)
    except GameStateLostError:
        await app.restore_game_state(table, held)
        assert table.game_state is not None
        request.state.CopyFrom(table.game_state)
        reply = await app.rules.get_view(request)
    return reply.seat_view, reply.status


async def visible_events(
    app: TableApplication,
    table_id: str,
    batch: events_pb2.EventBatch,
    seat: int | None,
    principal: Principal | None,
) -> list[events_pb2.Event]:
    """The events of a stored batch the viewer may see, opened, as they are written now (an
    older log's facts typed and reasons as enums: platform/event_upcasting.py); a viewer who
    lost the seat sees public ones. Only batches that passed
    verification are shown (log_security).

    Who holds the seat is judged at this batch's version or later: this replica's cached
    table lags the batches another replica appended, and a seat given up there (a leave,
    a computer player's takeover) must stop showing its cards here from that batch on.
    """
    table = await app.read(table_id, min_version=batch.table_version)
    if batch.table_version > table.state.version:
        raise LogTamperedError(
            f"the table's log failed verification after version {table.state.version}: "
            f"{table.broken or 'the batch is not in the log'}"
        )
    if seat is not None and (principal is None or not holds_seat(table, seat, principal)):
        seat = None
    security = app.security
    return [
        upcast_event(security.open_event(table_id, event))
        for event in batch.events
        if visible(event, seat)
    ]
