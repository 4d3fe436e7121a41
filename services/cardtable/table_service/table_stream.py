"""``WatchTable``: a table's batches after a version, then each new one as it lands, showing
the viewer only the events they may see (viewers.py).

The stream follows the table through :class:`TableChanges`, the one way this replica follows
a table live. It joins before reading the log, so that no batch stored after that read can
fall between the two. Batches go out in order, each version once: a live batch that is the
next version is sent as it came; a gap (a message lost, or one that arrived before the
batches it follows) is filled from the log. On a stream that does not republish, a live
message may be an append JetStream refused, so each one only sends the stream to the log.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from cardtable.platform.tokens import Principal
from cardtable.table_service.application import TableApplication
from cardtable.table_service.table_changes import TableChanges
from cardtable.table_service.viewers import visible_events
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2


async def batches(
    app: TableApplication,
    changes: TableChanges,
    table_id: str,
    seat: int | None,
    principal: Principal | None,
    from_version: int,
) -> AsyncGenerator[table_pb2.WatchTableResponse, None]:
    """The stream's answers (see the module docstring), for a viewer at ``seat`` (None: a
    spectator); it only ends when the caller does, or after the log when nothing is live."""

    live_are_stored = app.store.republishes
    sent = from_version
    read_from = 0  # stream sequence up to which the log has been read
    async with changes.following(table_id) as arrivals:
        backlog = True
        while True:
            if backlog:  # the start, or a gap in the live batches: read the log
                for stored in await app.history(table_id, sent, read_from):
                    yield await _shown(app, table_id, stored.batch, seat, principal)
                    sent, read_from = stored.batch.table_version, stored.sequence
                backlog = False
            if not changes.live:
                return
            batch, sequence = await arrivals.get()
            if batch.table_version <= sent:
                continue
            if not live_are_stored:  # maybe a refused append: the log tells
                backlog = True
                continue
            if batch.table_version == sent + 1:
                yield await _shown(app, table_id, batch, seat, principal)
                sent, read_from = batch.table_version, max(read_from, sequence)
            else:
                backlog = True


async def _shown(
    app: TableApplication,
    table_id: str,
    batch: events_pb2.EventBatch,
    seat: int | None,
    principal: Principal | None,
) -> table_pb2.WatchTableResponse:
    events = await visible_events(app, table_id, batch, seat, principal)
    return table_pb2.WatchTableResponse(version=batch.table_version, events=events)
