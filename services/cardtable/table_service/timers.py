"""Turn timers and the fill wait, driven by deadlines stored in the log.

Deadlines live in events (TurnTimerStarted; TableCreated's fill wait), so they survive any
restart. Each replica loads every running table the lobby index lists (a replica started
after a crash picks up the tables of the one that died) and fires what is due. Firing is a
command like any other with a deterministic id (``timeout:<turn>``, ``fill``): when several
replicas fire at once, one append wins and the others find the command already applied.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from cardtable.platform.logging import get_logger
from cardtable.table_service.application import TableApplication
from cardtable.table_service.errors import TableError
from cardtable.table_service.state import OPEN, RUNNING

_log = get_logger(__name__)
RETRY_AFTER_FAILURE_SECONDS = 2.0
ADOPT_EVERY_SECONDS = 2.0


class TableTimers:
    """Polls the lobby index for due deadlines and fires them."""

    def __init__(
        self, app: TableApplication, now: Callable[[], float], poll_seconds: float = 0.05
    ) -> None:
        self._app = app
        self._now = now
        self._poll = poll_seconds
        self._task: asyncio.Task[None] | None = None
        self._failed_at: dict[str, float] = {}
        self._in_flight: set[str] = set()
        self._firing: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="table-timers")

    async def stop(self) -> None:
        tasks = [task for task in (self._task, *self._firing) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        adopted_at = 0.0
        while True:
            await asyncio.sleep(self._poll)
            now = self._now()
            if now - adopted_at >= ADOPT_EVERY_SECONDS:
                adopted_at = now
                await self._adopt_running_tables()
            due = self._app.deadlines.pop_due(now)
            index = self._app.index
            if index is not None:
                due.extend(
                    summary.table_id
                    for summary in index.with_status(OPEN)
                    if 0 < summary.fill_at <= now
                )
            for table_id in due:
                if table_id in self._in_flight:
                    continue  # what that firing changes files the table's next deadline
                failed_at = self._failed_at.get(table_id, 0.0)
                if now - failed_at < RETRY_AFTER_FAILURE_SECONDS:
                    self._app.deadlines.schedule(table_id, failed_at + RETRY_AFTER_FAILURE_SECONDS)
                    continue
                self._in_flight.add(table_id)
                task = asyncio.create_task(self._fire(table_id))
                self._firing.add(task)
                task.add_done_callback(self._firing.discard)

    async def _adopt_running_tables(self) -> None:
        """Load running tables this replica does not hold yet, so their timers are known."""
        index = self._app.index
        if index is None:
            return
        for summary in index.tables(RUNNING):
            if not self._app.is_cached(summary.table_id):
                try:
                    await self._app.load(summary.table_id)
                except TableError as error:
                    _log.warning(
                        "could not adopt table",
                        extra={"table_id": summary.table_id, "error": str(error)},
                    )

    async def _fire(self, table_id: str) -> None:
        try:
            await self.fire(table_id)
        except TableError as error:
            self._failed(table_id)
            _log.warning("timer did not fire", extra={"table_id": table_id, "error": str(error)})
        except Exception:
            self._failed(table_id)
            _log.exception("timer failed", extra={"table_id": table_id})
        finally:
            self._in_flight.discard(table_id)

    def _failed(self, table_id: str) -> None:
        """Try again after a while: the deadline was taken off the book when it came due."""
        failed_at = self._failed_at[table_id] = self._now()
        self._app.deadlines.schedule(table_id, failed_at + RETRY_AFTER_FAILURE_SECONDS)

    async def fire(self, table_id: str) -> None:
        """Fire whatever is due at ``table_id`` now (a timeout or the fill)."""
        table = await self._app.read(table_id)
        state = table.state
        decider = self._app.decider
        if state.status == OPEN and state.settings.fill_with_bots:
            await self._app.execute(table_id, "fill", lambda current: decider.start(current, None))
        elif state.status == RUNNING and state.timer is not None:
            if state.timer.deadline > self._now():
                return
            turn = state.timer.turn
            await self._app.execute(
                table_id, f"timeout:{turn}", lambda current: decider.timeout(current, turn)
            )
