"""The bot service in-process (or as a process) next to the table-service test deployment.

People are scripted clients (``play_seat``) that poll their own view and make random legal
moves; computer players are whatever the bot service under test does. Outcomes are read from
the table service's event store: the log says who made each move.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from prometheus_client import CollectorRegistry

from cardtable.bot_service.main import BotServiceParts, bot_service_parts
from cardtable.bot_service.settings import BotTuning
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import connect_nats
from cardtable.table_service.limits import MAX_FILL_WAIT_MS
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2
from cardtable_tools.stack.processes import ServiceProcess, start
from tests.table_service.harness import SIGNING_KEY, Cluster, Player, pick_action

#: Fast settings for tests: claims expire quickly, scans are frequent, grace is short.
TEST_CLAIM_TTL_SECONDS = 1.5
TEST_RESCAN_SECONDS = 0.3
TEST_RECLAIM_GRACE_SECONDS = 0.2


def fill_settings(wait_ms: int = 200, strategy: str = "random") -> events_pb2.TableSettings:
    """No turn timer (a stalled bot must show up as a stall, not be hidden by timeouts)."""
    return events_pb2.TableSettings(
        turn_timer_ms=0, fill_with_bots=True, fill_wait_ms=wait_ms, bot_strategy=strategy
    )


async def alone_with_computers(
    host: Player, options: dict[str, str], strategy: str = "random"
) -> str:
    """A Hearts table ``host`` sits at alone and starts, its other seats handed to computers.

    The game is started, not left to the fill timer: a timer due before the host's join lands
    would seat computers everywhere first (a loaded machine can take that long to join).
    """
    table_id = await host.create("hearts", 4, options, fill_settings(MAX_FILL_WAIT_MS, strategy))
    await host.join(table_id, 0)
    await host.start(table_id)
    return table_id


@dataclass
class RunningBots:
    parts: BotServiceParts
    registry: CollectorRegistry
    replica_id: str

    @property
    def actor_id(self) -> str:
        """The actor its moves carry in ``ActionTaken``."""
        return f"bots:{self.replica_id}"

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float:
        return self.registry.get_sample_value(name, labels or {}) or 0.0


@asynccontextmanager
async def running_bot_service(
    nats_url: str,
    cluster: Cluster,
    replica_id: str,
    *,
    reclaim_grace_seconds: float = TEST_RECLAIM_GRACE_SECONDS,
    rescan_seconds: float = TEST_RESCAN_SECONDS,
    max_seats: int = 1000,
) -> AsyncIterator[RunningBots]:
    """A bot-service replica in this process, with its own NATS connection and channel."""
    connection = await connect_nats(nats_url, name=f"bots-{replica_id}")
    channel = grpc.aio.insecure_channel(cluster.table_address)
    registry = CollectorRegistry()
    tuning = BotTuning(
        max_seats=max_seats,
        claim_ttl_seconds=TEST_CLAIM_TTL_SECONDS,
        rescan_seconds=rescan_seconds,
        reclaim_grace_seconds=reclaim_grace_seconds,
        replica_id=replica_id,
    )
    try:
        async with bot_service_parts(
            connection.client,
            connection.jetstream,
            channel,
            cluster.tokens,
            LogNames.from_prefix(cluster.names.prefix),
            tuning,
            "random",
            registry,
        ) as parts:
            yield RunningBots(parts, registry, replica_id)
    finally:
        await channel.close(None)
        await connection.close()


async def start_bot_process(nats_url: str, cluster: Cluster, replica_id: str) -> ServiceProcess:
    """The bot service as its own OS process, once it reports SERVING."""
    return await start(
        "bots",
        {
            "NATS_URL": nats_url,
            "TABLE_ADDRESS": cluster.table_address,
            "TOKEN_SIGNING_KEY": SIGNING_KEY,
            "EVENT_PREFIX": cluster.names.prefix,
            "BOT_STRATEGY": "random",
            "BOT_REPLICA_ID": replica_id,
            "BOT_CLAIM_TTL_SECONDS": str(TEST_CLAIM_TTL_SECONDS),
            "BOT_RESCAN_SECONDS": str(TEST_RESCAN_SECONDS),
        },
    )


async def table_log(cluster: Cluster, table_id: str) -> list[events_pb2.EventBatch]:
    """Every batch of the table, from the table service's event store, as the servers see
    them (sealed events opened)."""
    security = cluster.parts.app.security
    return [
        security.opened(table_id, stored.batch)
        for stored in await cluster.parts.app.history(table_id)
    ]


def actions_of(batches: list[events_pb2.EventBatch]) -> list[events_pb2.ActionTaken]:
    return [
        event.action_taken
        for batch in batches
        for event in batch.events
        if event.HasField("action_taken")
    ]


def events_named(batches: list[events_pb2.EventBatch], name: str) -> list[events_pb2.Event]:
    return [event for batch in batches for event in batch.events if event.HasField(name)]


async def view_of(
    player: Player, table_id: str, seat: int | None
) -> table_pb2.GetTableResponse | None:
    """The player's view, or None when the table service refused it for a moment.

    The table service can fold a batch twice when a GetTable catches up while a MakeMove on
    the same table appends, and the GetTable then fails with FAILED_PRECONDITION; the next
    one succeeds. (A table-service bug, reported; people's clients here simply retry.)
    """
    try:
        return await player.view(table_id, seat)
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
    await asyncio.sleep(0.01)
    return None


async def play_seat(
    player: Player,
    table_id: str,
    seat: int,
    rng: random.Random,
    *,
    moves: int | None = None,
    limit_seconds: float = 60,
    poll_seconds: float = 0.02,
) -> int:
    """A person's client: random legal moves from its own view until the game ends (or after
    ``moves`` moves). Returns the moves it made."""
    made = 0
    deadline = time.monotonic() + limit_seconds
    while moves is None or made < moves:
        if time.monotonic() > deadline:
            raise AssertionError(f"seat {seat} of {table_id} was still playing at the deadline")
        table = await view_of(player, table_id, seat)
        if table is None:
            continue
        if table.status == "finished":
            return made
        if table.status == "running" and seat in table.game_status.to_act:
            try:
                await player.move(table_id, seat, pick_action(table.seat_view, rng))
            except grpc.aio.AioRpcError as error:  # lost a race with a timer or a reclaim
                if error.code() not in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.ABORTED,
                ):
                    raise
                continue
            made += 1
            continue
        await asyncio.sleep(poll_seconds)
    return made


async def wait_until_finished(player: Player, table_id: str, limit_seconds: float = 60) -> None:
    deadline = time.monotonic() + limit_seconds
    while True:
        table = await view_of(player, table_id, None)
        if table is not None and table.status == "finished":
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"table {table_id} did not finish in {limit_seconds} s")
        await asyncio.sleep(0.05)


async def eventually(check: Callable[[], bool], limit_seconds: float = 10) -> None:
    """Wait until ``check()`` holds (the bot service reacts to the log a moment later)."""
    deadline = time.monotonic() + limit_seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.02)
