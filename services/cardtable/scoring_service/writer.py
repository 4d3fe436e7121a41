"""Exactly-once projection: a run of messages, its rows and the new position in one transaction.

``ProjectionWriter.project`` is what the live consumer and the rebuild both call:

1. lock the position row and drop every message at or below it (already projected: a
   redelivery after a crash between commit and ack, or a restarted consumer);
2. load the rows of the tables the remaining messages touch, fold the batches onto them
   (:mod:`projection`), settle the ratings of the games that finished, in log order;
3. write the changed rows, the dead letters and the new position, and commit.

The caller acknowledges the messages only after this returns, so a crash anywhere before the
commit leaves nothing behind and the messages come again.

A message that cannot be projected goes to ``dead_letters`` with its reason, and the rest go
on. Decoding and folding are pure, so an exception there belongs to one message for certain:
that message is set aside and the run before it is committed, then the rest. When PostgreSQL
refuses a value, the message cannot be named that way, so the run is halved until the failing
message is alone. Any other database error is raised: the caller retries a transient one
(PostgreSQL away), and one that would refuse every message (a dropped table) stops it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import asyncpg

from cardtable.engine.rating import INITIAL_RATING
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_signing import BatchVerifier
from cardtable.scoring_service.committed_state import CommittedState, RatingKey
from cardtable.scoring_service.database import is_refused_data, replace_connections_after
from cardtable.scoring_service.messages import (
    DecodedBatch,
    PoisonMessageError,
    StoredMessage,
    decode,
)
from cardtable.scoring_service.projection import Projection, VersionGap
from cardtable.scoring_service.ratings import seat_changes
from cardtable.scoring_service.row_writes import write_rows
from cardtable.scoring_service.rows import (
    DeadLetterRow,
    DealRow,
    DealSeatRow,
    GamePlayerRow,
    GameRow,
    PlayerRow,
    RatingChangeRow,
    RatingRow,
    Row,
    SeatRow,
    TableState,
)

if TYPE_CHECKING:
    from cardtable.scoring_service.database import Connection

#: Row types in the order they are written (foreign keys point backwards in this list).
WRITE_ORDER: tuple[type[Row], ...] = (
    GameRow,
    SeatRow,
    GamePlayerRow,
    DealRow,
    DealSeatRow,
    PlayerRow,
    RatingRow,
    RatingChangeRow,
    DeadLetterRow,
)


@dataclass
class ProjectionOutcome:
    """What one call to ``project`` did."""

    position: int = 0
    projected: int = 0
    duplicates: int = 0
    already_projected: int = 0
    events: int = 0
    #: Batches authenticated by a later batch's signature, with no verification of their own.
    vouched: int = 0
    dead_letters: dict[int, str] = field(default_factory=dict)
    gaps: list[VersionGap] = field(default_factory=list)

    def add(self, other: ProjectionOutcome) -> None:
        """Fold a later outcome into this one."""
        self.position = max(self.position, other.position)
        self.projected += other.projected
        self.duplicates += other.duplicates
        self.already_projected += other.already_projected
        self.events += other.events
        self.vouched += other.vouched
        self.dead_letters.update(other.dead_letters)
        self.gaps.extend(other.gaps)


class _MessageFailedError(Exception):
    """Folding the message at ``sequence`` failed; the transaction is abandoned."""

    def __init__(self, sequence: int, reason: str) -> None:
        super().__init__(reason)
        self.sequence = sequence
        self.reason = reason


def _select_sql(row_type: type[Row]) -> str:
    return f"SELECT {', '.join(row_type.columns())} FROM {row_type.TABLE}"


async def _load_rows(
    connection: Connection, row_type: type[Row], where: str, *arguments: object
) -> list[Row]:
    records = await connection.fetch(f"{_select_sql(row_type)} {where}", *arguments)
    return [row_type(*record) for record in records]


async def load_tables(connection: Connection, table_ids: Sequence[str]) -> dict[str, TableState]:
    """The current state of each existing table among ``table_ids``."""
    if not table_ids:
        return {}
    ids = list(table_ids)
    tables: dict[str, TableState] = {}
    for game in await _load_rows(connection, GameRow, "WHERE table_id = ANY($1::text[])", ids):
        assert isinstance(game, GameRow)
        tables[game.table_id] = TableState(game=game, seats={})
    for seat in await _load_rows(connection, SeatRow, "WHERE table_id = ANY($1::text[])", ids):
        assert isinstance(seat, SeatRow)
        tables[seat.table_id].seats[seat.seat] = seat
    rated_rows = await _load_rows(
        connection, GamePlayerRow, "WHERE table_id = ANY($1::text[])", ids
    )
    for rated in rated_rows:
        assert isinstance(rated, GamePlayerRow)
        tables[rated.table_id].rated[rated.seat] = rated
    current = (
        "WHERE (table_id, deal_number) IN "
        "(SELECT table_id, deal_number FROM games WHERE table_id = ANY($1::text[]))"
    )
    for deal in await _load_rows(connection, DealRow, current, ids):
        assert isinstance(deal, DealRow)
        tables[deal.table_id].deal = deal
    for deal_seat in await _load_rows(connection, DealSeatRow, current, ids):
        assert isinstance(deal_seat, DealSeatRow)
        tables[deal_seat.table_id].deal_seats[deal_seat.seat] = deal_seat
    return tables


class StreamReplacedError(RuntimeError):
    """The event stream was deleted and made again since the projection began counting in it."""


async def read_position(
    connection: Connection | asyncpg.Pool, stream: str, schema: str = ""
) -> int:
    """The stream sequence of the last batch committed (0 before the first), in ``schema``
    (checked by the caller) or the connection's own."""
    table = f"{schema}.projection_position" if schema else "projection_position"
    value = await connection.fetchval(
        f"SELECT stream_sequence FROM {table} WHERE stream = $1", stream
    )
    return 0 if value is None else int(value)


class ProjectionWriter:
    """Projects runs of stored messages into one schema, exactly once."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        log: LogNames,
        committed: CommittedState | None = None,
        verifier: BatchVerifier | None = None,
    ) -> None:
        """``committed``: the rows this writer committed, kept so as not to read them back
        before each transaction (see its module); None reads everything every time.
        ``verifier``: the table service's public keys, which every batch must be signed with
        (None only for unsigned logs that tests write)."""
        self._pool = pool
        self._log = log
        self._committed = committed
        self._verifier = verifier
        #: The first stream sequence that must be signed (the stream's record of it).
        self.signed_from = 1

    async def prepare(self, stream_created: datetime | None = None) -> int:
        """Make sure the position row exists (before two writers could race to insert it), and
        that it counts in the stream created at ``stream_created``; returns the position.

        Raises :class:`StreamReplacedError` when the projection holds a position in another
        stream of the same name: going on would skip the new stream's first messages.
        """
        stream = self._log.stream
        async with self._pool.acquire() as connection, connection.transaction():
            await connection.execute(
                "INSERT INTO projection_position (stream, stream_sequence, stream_created) "
                "VALUES ($1, 0, $2) ON CONFLICT (stream) DO NOTHING",
                stream,
                stream_created,
            )
            row = await connection.fetchrow(
                "SELECT stream_sequence, stream_created FROM projection_position "
                "WHERE stream = $1 FOR UPDATE",
                stream,
            )
            assert row is not None
            position, known = int(row["stream_sequence"]), row["stream_created"]
            if stream_created is None or known == stream_created:
                return position
            if known is not None and position > 0:
                raise StreamReplacedError(
                    f"the projection is at {position} of stream {stream} created {known}, but "
                    f"the stream now was created {stream_created}: rebuild the projection "
                    "(cardtable rebuild)"
                )
            await connection.execute(
                "UPDATE projection_position SET stream_created = $2 WHERE stream = $1",
                stream,
                stream_created,
            )
            return position

    async def position(self) -> int:
        """The stream sequence of the last batch committed."""
        return await read_position(self._pool, self._log.stream)

    async def project(self, messages: Sequence[StoredMessage]) -> ProjectionOutcome:
        """Project ``messages`` (ascending sequences) and commit; see the module docstring."""
        pending = sorted(messages, key=lambda message: message.sequence)
        decoded: dict[int, DecodedBatch] = {}
        poison: dict[int, str] = {}
        for message in pending:
            try:
                decoded[message.sequence] = decode(message, self._log)
            except PoisonMessageError as error:
                poison[message.sequence] = error.reason
        outcome = ProjectionOutcome()
        while pending:
            window = pending
            while True:
                try:
                    outcome.add(await self._transaction(window, decoded, poison))
                    break
                except _MessageFailedError as failure:
                    poison[failure.sequence] = failure.reason
                    window = [m for m in window if m.sequence <= failure.sequence]
                except Exception as error:
                    if not is_refused_data(error):
                        await replace_connections_after(error, self._pool)
                        raise  # PostgreSQL away (the caller retries) or the schema broken
                    if len(window) > 1:
                        window = window[: len(window) // 2]
                    elif window[0].sequence in poison:
                        raise  # not even its dead letter can be stored: the schema is broken
                    else:
                        poison[window[0].sequence] = f"could not be stored: {error!r}"
            pending = pending[len(window) :]
        return outcome

    async def _transaction(
        self,
        messages: Sequence[StoredMessage],
        decoded: dict[int, DecodedBatch],
        poison: dict[int, str],
    ) -> ProjectionOutcome:
        if self._committed is None:
            outcome, _ = await self._fold_and_commit(messages, decoded, poison, {})
            return outcome
        ratings: dict[RatingKey, RatingRow] = {}
        try:
            outcome, projection = await self._fold_and_commit(messages, decoded, poison, ratings)
        except BaseException:
            self._committed.forget()  # the fold may have changed the objects held there
            raise
        if projection is not None:
            self._committed.committed(projection.tables, ratings, outcome.position)
        return outcome

    async def _load_tables(
        self, connection: Connection, table_ids: list[str]
    ) -> dict[str, TableState]:
        if self._committed is None:
            return await load_tables(connection, table_ids)
        held, to_read = self._committed.split_tables(table_ids)
        if to_read:
            held.update(await load_tables(connection, to_read))
        return held

    async def _fold_and_commit(
        self,
        messages: Sequence[StoredMessage],
        decoded: dict[int, DecodedBatch],
        poison: dict[int, str],
        ratings: dict[RatingKey, RatingRow],
    ) -> tuple[ProjectionOutcome, Projection | None]:
        """One transaction; ``ratings`` receives every rating row it read or changed."""
        async with self._pool.acquire() as connection, connection.transaction():
            position = await connection.fetchval(
                "SELECT stream_sequence FROM projection_position WHERE stream = $1 FOR UPDATE",
                self._log.stream,
            )
            position = 0 if position is None else int(position)
            if self._committed is not None:
                self._committed.check_position(position)
            fresh = [message for message in messages if message.sequence > position]
            outcome = ProjectionOutcome(
                position=position, already_projected=len(messages) - len(fresh)
            )
            if not fresh:
                return outcome, None
            batches = [decoded[m.sequence] for m in fresh if m.sequence not in poison]
            tables = await self._load_tables(connection, sorted({b.table_id for b in batches}))
            projection = Projection(tables, self._verifier, self.signed_from)
            outcome.vouched = projection.vouch(batches)
            for batch in batches:
                try:
                    applied = projection.apply(batch)
                except Exception as error:  # the fold is pure: the message is at fault
                    reason = error.reason if isinstance(error, PoisonMessageError) else repr(error)
                    raise _MessageFailedError(batch.sequence, reason) from error
                if applied:
                    outcome.projected += 1
                    outcome.events += len(batch.batch.events)
                else:
                    outcome.duplicates += 1
            await self._settle_ratings(connection, projection, ratings)
            for message in fresh:
                if message.sequence in poison:
                    reason = poison[message.sequence]
                    outcome.dead_letters[message.sequence] = reason
                    projection.touch(
                        DeadLetterRow(
                            message.sequence,
                            message.subject,
                            reason,
                            message.data,
                            message.stored_at,
                        )
                    )
            await self._write(connection, projection)
            outcome.position = fresh[-1].sequence
            outcome.gaps = projection.gaps
            await connection.execute(
                "UPDATE projection_position SET stream_sequence = $2 WHERE stream = $1",
                self._log.stream,
                outcome.position,
            )
            return outcome, projection

    async def _load_ratings(
        self, connection: Connection, wanted: list[RatingKey]
    ) -> dict[RatingKey, RatingRow]:
        if self._committed is not None:
            held, wanted = self._committed.split_ratings(wanted)
        else:
            held = {}
        if wanted:
            records = await connection.fetch(
                f"{_select_sql(RatingRow)} WHERE (player_id, game) IN "
                "(SELECT * FROM unnest($1::text[], $2::text[]))",
                [player for player, _ in wanted],
                [game for _, game in wanted],
            )
            for record in records:
                held[(record["player_id"], record["game"])] = RatingRow(*record)
        return held

    async def _settle_ratings(
        self,
        connection: Connection,
        projection: Projection,
        ratings: dict[RatingKey, RatingRow],
    ) -> None:
        """Rate the rated games that finished, in log order, from the ratings before each.

        ``ratings`` receives every rating row read or changed, for :class:`CommittedState`.
        An unrated game changes no rating (ratings.py): its seats keep no rating change.
        """
        rated_games = [finished for finished in projection.finished if finished.rated]
        if not rated_games:
            return
        wanted = sorted(
            {(seat.player_id, game.game) for game in rated_games for seat in game.seats}
        )
        ratings.update(await self._load_ratings(connection, wanted))
        for finished in rated_games:
            keys = [(seat.player_id, finished.game) for seat in finished.seats]
            before = [ratings[key].rating if key in ratings else INITIAL_RATING for key in keys]
            try:
                changes = seat_changes(finished, before)
            except PoisonMessageError as error:
                raise _MessageFailedError(finished.sequence, error.reason) from error
            table = projection.tables[finished.table_id]
            for seat, (key, change) in enumerate(zip(keys, changes, strict=True)):
                row = ratings.setdefault(key, RatingRow(*key, INITIAL_RATING, 0, finished.at))
                rating_before = row.rating
                row.rating += change.change
                row.games += 1
                row.updated_at = finished.at
                projection.touch(row)
                projection.touch(
                    RatingChangeRow(
                        table_id=finished.table_id,
                        seat=seat,
                        player_id=key[0],
                        game=finished.game,
                        rating_before=rating_before,
                        rating_after=row.rating,
                        change=change.change,
                        leaver_deduction=change.leaver_deduction,
                        at=finished.at,
                        stream_sequence=finished.sequence,
                    )
                )
                rated = table.rated[seat]
                rated.rating_change = change.change
                projection.touch(rated)

    async def _write(self, connection: Connection, projection: Projection) -> None:
        by_type: dict[type[Row], list[tuple[object, ...]]] = {}
        for row in projection.changed():
            by_type.setdefault(type(row), []).append(row.values())
        for player in projection.players.values():
            by_type.setdefault(PlayerRow, []).append(player.values())
        for row_type in WRITE_ORDER:
            rows = by_type.get(row_type)
            if rows:
                await write_rows(connection, row_type, rows)
