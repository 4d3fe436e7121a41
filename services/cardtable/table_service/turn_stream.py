"""``WatchTurns``: a seat's view each time that seat is to act, then once when the game ends.

A client playing a seat would otherwise ask ``GetTable`` before every move of its own. Here it
opens one stream and is told: this replica's appends wake the stream at once, other replicas'
through :class:`TableChanges`, the one way this replica follows a table live. The view sent
is the one the rules service returned with the move when there is one (the table keeps the
views of the seats to act), else it asks for it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from cardtable.platform.tokens import Principal
from cardtable.table_service.application import TableApplication
from cardtable.table_service.errors import PermissionDeniedError
from cardtable.table_service.table_changes import TableChanges
from cardtable.table_service.viewers import holds_seat, view_of
from cardtable_api.common.v1 import common_pb2
from cardtable_api.table.v1 import table_pb2


async def turns(
    app: TableApplication,
    changes: TableChanges,
    table_id: str,
    seat: int,
    principal: Principal,
    after_version: int,
) -> AsyncGenerator[table_pb2.WatchTurnsResponse, None]:
    """The stream's answers (see the module docstring); ends after the game's final view."""
    sent = after_version
    async with changes.watching(table_id) as changed:
        while True:
            changed.clear()  # before reading: a change from now on wakes the wait below
            table = await app.load(table_id)
            if table.state.version < changes.latest(table_id):
                table = await app.read(table_id)  # another replica appended: catch up
            if not holds_seat(table, seat, principal):
                raise PermissionDeniedError(f"you no longer hold seat {seat} at this table")
            if table.state.version > sent and _to_act_or_over(table.game_status, seat):
                view, status = await view_of(app, table, seat)
                yield table_pb2.WatchTurnsResponse(
                    version=table.state.version, game_status=status, seat_view=view
                )
                sent = table.state.version
                if status.over:
                    return
            await changed.wait()


def _to_act_or_over(status: common_pb2.GameStatus | None, seat: int) -> bool:
    return status is not None and (status.over or seat in status.to_act)
