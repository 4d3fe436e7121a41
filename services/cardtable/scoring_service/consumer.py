"""The live projection: a durable JetStream pull consumer feeding the writer.

Each round fetches up to ``batch_size`` messages, projects them in one transaction
(:class:`ProjectionWriter`), and only then acknowledges them, all at once: the consumer's ack
policy is ``all``, so one ack of the batch's last message covers every message before it (the
dead-lettered ones too: they are in the dead-letter table, and JetStream must not offer them
again). One ack per batch instead of one per message saves the consumer and NATS a publish per
move. While PostgreSQL is
away the same messages are retried with a capped exponential backoff and kept ``in_progress``,
so JetStream does not hand them out again meanwhile; nothing is acknowledged until committed.

Postgres owns the position. At start-up the durable consumer is kept only if it has delivered
nothing beyond the committed position; otherwise (a crash before commit, a projection rebuilt in
place, a restored database) it is recreated to deliver from the position on. Redeliveries at or
below the position are skipped by the writer. One consumer process per projection schema: the
fold depends on log order.

Whenever the consumer leaves the stream unread (it is being bound again, or a quiet spell finds
the stream ahead of the position), the projection reads the log by sequence from the stream's
leader (:mod:`sequence_reading`); the consumer goes on from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError, ServiceUnavailableError

from cardtable.platform.log_signing import signed_from_sequence
from cardtable.platform.logging import BoundLogger, get_logger
from cardtable.platform.tracing import context_from_headers, current, current_trace_id
from cardtable.scoring_service.database import is_transient
from cardtable.scoring_service.messages import StoredMessage
from cardtable.scoring_service.metrics import ProjectionMetrics
from cardtable.scoring_service.sequence_reading import SequenceReader
from cardtable.scoring_service.settings import ConsumerSettings
from cardtable.scoring_service.writer import ProjectionWriter

Result = TypeVar("Result")

#: Also how soon a consumer that stopped delivering is read around (``QUIET_CHECK_SECONDS``).
FETCH_TIMEOUT_SECONDS = 0.5
#: Collecting what came while lingering: the pull returns at once when messages wait.
LINGER_FETCH_SECONDS = 0.01
#: After this long without a message, read by sequence what the stream holds past the position
#: and make sure the durable consumer still exists; finding something twice in a row (with no
#: delivery between) means the consumer is stuck. An empty fetch is quiet enough.
QUIET_CHECK_SECONDS = FETCH_TIMEOUT_SECONDS
#: While binding again, how often to look for messages to read by sequence.
BINDING_READ_SECONDS = 0.25
FIRST_RETRY_SECONDS = 0.1
MAX_RETRY_SECONDS = 5.0
#: NATS trouble worth waiting out: a reconnect in progress, a slow or absent server.
NATS_ERRORS: tuple[type[BaseException], ...] = (
    nats.errors.Error,
    TimeoutError,
    asyncio.TimeoutError,
)


class DeliveryLostError(Exception):
    """Messages between the projection's position and the next delivery never arrived."""


class ConsumerStuckError(Exception):
    """The stream holds messages past the position that the durable consumer does not deliver.

    Seen on a cluster that lost its stream leader: the consumer's group kept a leader (or had
    none) that no longer saw the stream grow, until the lost server came back.
    """


#: What binding to the consumer again (recreated from the position if need be) cures.
REBIND_ERRORS: tuple[type[BaseException], ...] = (
    *NATS_ERRORS,
    DeliveryLostError,
    ConsumerStuckError,
)


def stored_message(message: Msg) -> StoredMessage:
    """A JetStream message as the writer takes it."""
    metadata = message.metadata
    return StoredMessage(
        sequence=metadata.sequence.stream,
        subject=message.subject,
        data=message.data,
        headers=dict(message.headers or {}),
        stored_at=metadata.timestamp,
    )


class ProjectionConsumer:
    """Runs the live projection until ``stop`` is called."""

    def __init__(
        self,
        jetstream: JetStreamContext,
        writer: ProjectionWriter,
        settings: ConsumerSettings,
        metrics: ProjectionMetrics,
        logger: BoundLogger | None = None,
        *,
        reader: SequenceReader,
    ) -> None:
        self._js = jetstream
        self._reader = reader
        self._writer = writer
        self._settings = settings
        self._metrics = metrics
        self._log = (logger or get_logger(__name__)).bind(
            stream=settings.log.stream, consumer=settings.consumer_name
        )
        self._stop = asyncio.Event()
        #: The position this consumer last saw committed, and whether the stream's sequence
        #: numbers are all ours (its one subject is the consumer's filter), so that one
        #: missing before a delivery means a delivery lost (see ``_check_delivery``).
        self._position: int | None = None
        self._contiguous = False
        #: The last gap that made the consumer bind again: (position, first delivered after).
        self._gap_seen: tuple[int, int] | None = None
        #: A quiet check found the stream ahead of the projection and read it by sequence, and
        #: the consumer has delivered nothing since.
        self._left_unread = False
        #: Set when the consumer is stuck: the next bind makes it afresh whatever it reports.
        self._make_consumer_afresh = False

    def stop(self) -> None:
        """Finish the round in hand (commit and acknowledge) and return from ``run``."""
        self._stop.set()

    async def run(self) -> None:
        """Consume until stopped; transient failures of NATS or PostgreSQL are waited out."""
        subscription = await self._retry(self._start, "starting the projection")
        while subscription is not None:
            try:
                # Quiet means nothing new projected: redeliveries of what is already in do not
                # show that the consumer still delivers what the stream gains.
                quiet_since = time.monotonic()
                while not self._stop.is_set():
                    position = self._position
                    messages = await self._fetch(subscription)
                    if messages:
                        await self._project_and_acknowledge(messages)
                    if self._position != position:
                        quiet_since = time.monotonic()
                        self._left_unread = False
                    elif time.monotonic() - quiet_since >= QUIET_CHECK_SECONDS:
                        await self._check_the_consumer_keeps_up()
                        quiet_since = time.monotonic()
                return
            except REBIND_ERRORS as error:  # consumer gone, stream away, a delivery lost
                self._log.warning("fetching failed, binding again", extra={"error": repr(error)})
            finally:
                with contextlib.suppress(*NATS_ERRORS):
                    await subscription.unsubscribe()
            subscription = await self._bind_again()

    async def _bind_again(self) -> JetStreamContext.PullSubscription | None:
        """Bind to the consumer again, reading the log by sequence until it is bound.

        Binding can take as long as the cluster needs to give the consumer's group (or the meta
        group, to make a new one) a leader: the projection keeps up by sequence meanwhile.
        """

        async def bind() -> JetStreamContext.PullSubscription | None:
            await self._pause(FIRST_RETRY_SECONDS * 10)
            return await self._retry(self._start, "binding the consumer again")

        binding = asyncio.ensure_future(bind())
        try:
            while not binding.done():
                if not await self._read_by_sequence():
                    await asyncio.wait({binding}, timeout=BINDING_READ_SECONDS)
            return binding.result()
        finally:
            if not binding.done():
                binding.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await binding

    async def _check_the_consumer_keeps_up(self) -> None:
        """Read by sequence what the consumer left unread; raise if it is gone or did so twice.

        Some servers (2.9) answer fetches on a deleted consumer with silence; a clustered one
        whose stream leader was lost has been seen to keep a consumer that delivers nothing.
        Only a delivery clears the first time: a stream that stopped growing proves nothing.
        """
        position = self._position
        if await self._read_by_sequence():
            if self._left_unread:
                self._left_unread = False
                self._make_consumer_afresh = True
                raise ConsumerStuckError(
                    f"the consumer left the stream unread twice in a row, the second time "
                    f"past position {position}"
                )
            self._left_unread = True  # they may have been on their way: look again later
        await self._js.consumer_info(self._settings.log.stream, self._settings.consumer_name)

    async def _read_by_sequence(self) -> int:
        """Project what the stream holds past the position, read by sequence; how many.

        Never raises for NATS or PostgreSQL being away: the caller goes on binding or fetching.
        """
        position = self._position
        if not self._contiguous or position is None or self._stop.is_set():
            return 0
        try:
            stored = await self._reader.read_after(position, self._settings.batch_size)
            if stored and await self._project(stored):
                self._metrics.sequence_reads.inc(len(stored))
                self._log.info(
                    "read the log by sequence",
                    extra={"messages": len(stored), "to": self._position},
                )
                return len(stored)
        except Exception as error:
            if not (is_transient(error) or isinstance(error, NATS_ERRORS)):
                raise
            self._log.warning("reading the log by sequence failed", extra={"error": repr(error)})
        return 0

    async def _start(self) -> JetStreamContext.PullSubscription:
        info = await self._js.stream_info(self._settings.log.stream)
        self._writer.signed_from = signed_from_sequence(info.config.metadata)
        position = await self._writer.prepare(info.created)
        self._position = position
        self._contiguous = info.config.subjects == [self._settings.log.tables_subject]
        subscription = await self._subscribe(position)
        self._log.info("projection consumer started", extra={"position": position})
        return subscription

    async def _subscribe(self, position: int) -> JetStreamContext.PullSubscription:
        """Bind to the durable consumer, recreated from ``position`` when it is ahead."""
        stream, name = self._settings.log.stream, self._settings.consumer_name
        info = await self._js.stream_info(stream)
        if info.state.last_seq < position:
            self._log.error(
                "the projection is ahead of the stream: was the stream recreated? rebuild it",
                extra={"position": position, "last_seq": info.state.last_seq},
            )
        existing: api.ConsumerInfo | None = None
        try:
            existing = await self._js.consumer_info(stream, name)
        except NotFoundError:
            pass
        except (TimeoutError, nats.errors.TimeoutError, ServiceUnavailableError):
            # No leader answers for the consumer (its group lost its quorum with a server):
            # one made afresh gets a group of its own among the servers that are up.
            self._log.warning("the durable consumer does not answer: making it afresh")
            self._make_consumer_afresh = True
        if (
            existing is None
            or self._make_consumer_afresh
            or not self._consumer_fits(existing, position)
        ):
            if existing is not None or self._make_consumer_afresh:
                with contextlib.suppress(NotFoundError):
                    await self._js.delete_consumer(stream, name)
            self._make_consumer_afresh = False
            await self._js.add_consumer(stream, self._consumer_config(position))
            self._log.info("durable consumer created", extra={"from_sequence": position + 1})
        return await self._js.pull_subscribe_bind(durable=name, stream=stream)

    def _consumer_config(self, position: int) -> api.ConsumerConfig:
        return api.ConsumerConfig(
            durable_name=self._settings.consumer_name,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=position + 1,
            # One consumer per schema, reading in order: one ack covers the batch before it.
            ack_policy=api.AckPolicy.ALL,
            ack_wait=self._settings.ack_wait_seconds,
            # Room for a fetch in hand and the next; fewer would make each fetch wait out
            # its timeout for messages JetStream may not send.
            max_ack_pending=self._settings.batch_size * 4,
            filter_subject=self._settings.log.tables_subject,
            max_deliver=-1,
        )

    def _consumer_fits(self, info: api.ConsumerInfo, position: int) -> bool:
        """Whether the durable consumer can go on: same settings, nothing delivered we lack.

        Messages it delivered at or below the position but never saw acknowledged come again
        after the ack wait and are skipped. A pull request still open from a process that died
        would swallow new messages until their ack wait ran out, so it is a reason to start over.
        """
        config, wanted = info.config, self._consumer_config(position)
        delivered = info.delivered.stream_seq if info.delivered else 0
        acknowledged = info.ack_floor.stream_seq if info.ack_floor else 0
        return (
            (config.filter_subject, config.ack_policy, config.ack_wait, config.max_ack_pending)
            == (wanted.filter_subject, wanted.ack_policy, wanted.ack_wait, wanted.max_ack_pending)
            and (delivered or 0) <= position
            and (acknowledged or 0) <= position
            and not info.num_waiting
        )

    async def _fetch(self, subscription: JetStreamContext.PullSubscription) -> list[Msg]:
        """The next messages, or none after a quiet ``FETCH_TIMEOUT_SECONDS`` or when asked to stop.

        A stop does not wait for the fetch to time out: what it may still bring is not
        acknowledged, so JetStream offers it again to the next consumer.
        """
        fetching = asyncio.ensure_future(self._next_messages(subscription))
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({fetching, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not fetching.done():
            fetching.cancel()
            with contextlib.suppress(asyncio.CancelledError, *NATS_ERRORS):
                await fetching
            return []
        try:
            return fetching.result()
        except (TimeoutError, nats.errors.TimeoutError):
            return []

    async def _next_messages(self, subscription: JetStreamContext.PullSubscription) -> list[Msg]:
        """The first message as soon as it is appended, then those already waiting behind it.

        One fetch of a whole batch would hold the first message until the batch filled up or
        the fetch timed out: fine for catching up, the whole timeout of lag for a quiet table. A
        lone message waits ``linger_seconds`` for company, then whatever came is taken at once.
        """
        messages = await subscription.fetch(1, timeout=FETCH_TIMEOUT_SECONDS)
        room = self._settings.batch_size - 1
        waiting = min(messages[-1].metadata.num_pending, room)
        if waiting > 0:
            # The first message is in hand: a follow-up that times out must not drop it. Left
            # unacknowledged, it would be acknowledged by the next batch's ack (policy "all")
            # without ever being projected.
            with contextlib.suppress(TimeoutError, nats.errors.TimeoutError):
                messages += await subscription.fetch(waiting, timeout=FETCH_TIMEOUT_SECONDS)
        elif room > 0 and self._settings.linger_seconds > 0:
            # A lone message: others are usually a few milliseconds behind it under load.
            await asyncio.sleep(self._settings.linger_seconds)
            with contextlib.suppress(TimeoutError, nats.errors.TimeoutError):
                messages += await subscription.fetch(room, timeout=LINGER_FETCH_SECONDS)
        return messages

    def _check_delivery(self, stored: Sequence[StoredMessage]) -> None:
        """Raise if a message is missing between the position and the last one delivered.

        A fetch's reply can be lost on its way (the server that relayed it died, the consumer's
        leader changed): JetStream counts those messages delivered and sends the next ones, and
        acknowledging those (policy "all") would acknowledge the lost ones unprojected. Binding
        again recreates the consumer from the position (``_subscribe``), so they come again.
        """
        if not self._contiguous or self._position is None:
            return
        fresh = sorted({item.sequence for item in stored if item.sequence > self._position})
        if not fresh or fresh[-1] - self._position == len(fresh):
            self._gap_seen = None
            return
        gap = (self._position, fresh[0])
        if gap == self._gap_seen:
            # The same gap from a consumer made afresh from the position: the stream itself
            # lacks those sequences (not something this log's settings allow, but not worth a
            # projection stuck forever); the writer then reports the tables' version gaps.
            self._log.warning("the stream lacks sequences", extra={"after": self._position})
            return
        self._gap_seen = gap
        raise DeliveryLostError(
            f"delivered up to {fresh[-1]} after position {self._position}: "
            f"{fresh[-1] - self._position - len(fresh)} message(s) lost on the way"
        )

    async def _project_and_acknowledge(self, messages: Sequence[Msg]) -> None:
        stored = [stored_message(message) for message in messages]
        self._check_delivery(stored)
        keep_alive = asyncio.create_task(self._keep_in_progress(messages))
        try:
            projected = await self._project(stored, retrying=True)
        finally:
            keep_alive.cancel()
        if projected:  # else stopped while PostgreSQL was away: JetStream offers them again
            await self._acknowledge(messages)

    async def _project(self, stored: Sequence[StoredMessage], *, retrying: bool = False) -> bool:
        """Commit ``stored`` and report it; whether it was committed (a stop ends the retries).

        The lag is observed once per message: a delivery of what was already read by sequence
        (or delivered before) at or below the position is skipped by the writer, not projected.
        """
        before = self._position or 0
        if retrying:
            outcome = await self._retry(lambda: self._writer.project(stored), "projecting")
            if outcome is None:
                return False
        else:
            outcome = await self._writer.project(stored)
        self._position = max(before, outcome.position)
        committed_at = datetime.now(UTC)
        self._metrics.observe(
            outcome,
            [
                (committed_at - item.stored_at).total_seconds()
                for item in stored
                if item.sequence > before
            ],
        )
        # the move's trace context came with it from the table service: log its trace id, so
        # one move can be followed from the client's call to this commit (only when debugging:
        # reading every message's trace context costs time on the hot path)
        for item in stored if self._log.isEnabledFor(logging.DEBUG) else ():
            with current(context_from_headers(item.headers)):
                self._log.debug(
                    "projected",
                    extra={
                        "stream_sequence": item.sequence,
                        "subject": item.subject,
                        "trace_id": current_trace_id(),
                    },
                )
        for gap in outcome.gaps:
            self._log.warning(
                "batches missing from a table's subject",
                extra={"table_id": gap.table_id, "expected": gap.expected, "found": gap.found},
            )
        for sequence, reason in outcome.dead_letters.items():
            self._log.error(
                "message set aside in the dead-letter table",
                extra={"stream_sequence": sequence, "reason": reason},
            )
        return True

    async def _acknowledge(self, messages: Sequence[Msg]) -> None:
        """Ack the committed batch with its last message (ack policy ``all``); a lost ack only
        means a redelivery the writer skips."""
        try:
            await messages[-1].ack()
        except NATS_ERRORS as error:
            self._log.warning("acknowledging failed", extra={"error": repr(error)})

    async def _keep_in_progress(self, messages: Sequence[Msg]) -> None:
        """Tell JetStream we are still working, so it does not redeliver while we retry."""
        interval = max(self._settings.ack_wait_seconds / 3, 0.5)
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(*NATS_ERRORS):
                for message in messages:
                    await message.in_progress()

    async def _retry(self, attempt: Callable[[], Awaitable[Result]], what: str) -> Result | None:
        """``attempt()`` until it succeeds, waiting out transient failures; ``None`` if stopped."""
        delay = FIRST_RETRY_SECONDS
        while not self._stop.is_set():
            try:
                return await attempt()
            except Exception as error:
                if not (is_transient(error) or isinstance(error, NATS_ERRORS)):
                    raise
                self._metrics.retries.inc()
                self._log.warning(
                    f"{what} failed, retrying",
                    extra={"error": repr(error), "retry_in_seconds": delay},
                )
            await self._pause(delay)
            delay = min(delay * 2, MAX_RETRY_SECONDS)
        return None

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake up at once when asked to stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)
