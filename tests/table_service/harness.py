"""A table service in-process on real NATS JetStream with the real rules service over gRPC.

Scenario tests drive it only through gRPC, as other backends would: ``Player`` is one client
with its own token, and every call carries a fresh command id unless the test reuses one.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import grpc
from nats.js.errors import APIError
from prometheus_client import CollectorRegistry

from cardtable.client.views import random_legal_action
from cardtable.platform.grpc_server import start_server
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import STREAM_CONFIG_INVALID
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.nats_access import TABLE
from cardtable.platform.settings import NatsCredentials
from cardtable.platform.tokens import BOT, PERSON, TokenCodec
from cardtable.rules_service.main import rules_service
from cardtable.table_service.commands import Environment
from cardtable.table_service.limits import TableLimits
from cardtable.table_service.log_security import LogSecurity
from cardtable.table_service.main import TableServiceParts, table_service_parts
from cardtable.table_service.quotas import DEFAULT_QUOTAS, QuotaSettings
from cardtable.table_service.rules_pipeline import PipelinedRules
from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

SIGNING_KEY = "test-signing-key-0123456789abcdef0123456789"
#: One deployment's log keys per event prefix: every replica of a test shares them.
_LOG_SECURITY: dict[str, LogSecurity] = {}


def log_security(prefix: str) -> LogSecurity:
    """The keys of the deployment under ``prefix`` (made on first use)."""
    if prefix not in _LOG_SECURITY:
        _LOG_SECURITY[prefix] = LogSecurity.generate()
    return _LOG_SECURITY[prefix]


#: A public site's quotas, but a rate no person reaches and tests that play at machine speed do
#: (tests/table_service/test_quotas.py holds the rate limit to its word).
TEST_QUOTAS = replace(DEFAULT_QUOTAS, mutations_per_second=10_000, mutation_burst=10_000)
#: Timeouts are tested with timers far shorter than a person would be given.
TEST_LIMITS = TableLimits(min_turn_timer_ms=50)
NO_TIMERS = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False)
#: Settings within the rated bounds (table_service/rated.py): a timer long enough for a person,
#: and longer than a test waits between two moves. A test that checks ratings creates its
#: tables with these; a table without a timer is unrated.
RATED_SETTINGS = events_pb2.TableSettings(turn_timer_ms=60_000, fill_with_bots=False)


@dataclass
class Cluster:
    """The addresses and parts of a running test deployment."""

    table_address: str
    rules_address: str
    names: LogNames
    tokens: TokenCodec
    parts: TableServiceParts
    nats: NatsConnection
    registry: CollectorRegistry
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    def stub(self) -> table_pb2_grpc.TableServiceStub:
        channel = grpc.aio.insecure_channel(self.table_address)
        self.channels.append(channel)
        return table_pb2_grpc.TableServiceStub(channel)

    def player(self, player_id: str, kind: str = PERSON) -> Player:
        return Player(self.stub(), self.tokens.issue(player_id, kind), player_id)

    def computer(self, table_id: str, seat: int, player_id: str = "bots:test") -> Player:
        """A computer player's client with the bot service's token for that one seat."""
        token = self.tokens.issue(player_id, BOT, bot_seat=(table_id, seat))
        return Player(self.stub(), token, player_id)

    async def subject_sequence(self, table_id: str) -> int:
        """The stream sequence of the table's last message (0 when none)."""
        last = await self.parts.app.store.last(table_id)
        return 0 if last is None else last.sequence


@asynccontextmanager
async def running_rules() -> AsyncIterator[str]:
    server = await start_server([rules_service()], port=0, host="127.0.0.1")
    try:
        yield f"127.0.0.1:{server.port}"
    finally:
        await server.stop(None)


async def _refuse_like_nats_2_9(*args: object, **kwargs: object) -> NoReturn:
    """What NATS before 2.10 answers to adding republishing to an existing stream."""
    raise APIError(
        code=500,
        err_code=STREAM_CONFIG_INVALID,
        description="stream configuration update can not change RePublish",
    )


@asynccontextmanager
async def running_table_service(
    nats_url: str,
    prefix: str,
    rules_address: str,
    environment: Environment | None = None,
    *,
    republish: bool = True,
    credentials: NatsCredentials | None = None,
    quotas: QuotaSettings = TEST_QUOTAS,
    limits: TableLimits = TEST_LIMITS,
) -> AsyncIterator[Cluster]:
    """The table service in-process; ``republish=False`` has its NATS connection refuse stream
    updates as NATS 2.9 does, so that a stream made without republishing stays so.
    ``credentials`` name its NATS user on a server with authorization."""
    connection = await connect_nats(
        nats_url,
        name="table-under-test",
        credentials=credentials,
        inbox_prefix=LogNames.from_prefix(prefix).inbox_prefix(TABLE) if credentials else None,
    )
    if not republish:
        connection.jetstream.update_stream = _refuse_like_nats_2_9  # type: ignore[method-assign]
    rules_channel = grpc.aio.insecure_channel(rules_address)
    rules = PipelinedRules(rules_channel)  # what the service's composition root uses
    tokens = TokenCodec(SIGNING_KEY)
    names = LogNames.from_prefix(prefix)
    registry = CollectorRegistry()
    try:
        async with table_service_parts(
            connection.client,
            connection.jetstream,
            rules,
            tokens,
            names,
            environment,
            registry=registry,
            security=log_security(prefix),
            limits=limits,
            quotas=quotas,
        ) as parts:
            server = await start_server([parts.service()], port=0, host="127.0.0.1")
            cluster = Cluster(
                f"127.0.0.1:{server.port}",
                rules_address,
                names,
                tokens,
                parts,
                connection,
                registry,
            )
            try:
                yield cluster
            finally:
                for channel in cluster.channels:
                    await channel.close(None)
                await server.stop(None)
    finally:
        await rules.close()
        await rules_channel.close(None)
        await connection.close()


@dataclass
class Player:
    """One client with its own token."""

    stub: table_pb2_grpc.TableServiceStub
    token: str
    player_id: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    async def create(
        self,
        game: str,
        seats: int = 0,
        options: dict[str, str] | None = None,
        settings: events_pb2.TableSettings | None = NO_TIMERS,
    ) -> str:
        request = table_pb2.CreateTableRequest(
            command_id=str(uuid.uuid4()),
            game=game,
            seats=seats,
            options=common_pb2.GameOptions(values=options or {}),
        )
        if settings is not None:
            request.settings.CopyFrom(settings)
        reply = await self.stub.CreateTable(request, metadata=self.metadata)
        return reply.table_id

    async def create_seated(
        self,
        game: str,
        seat: int,
        seats: int = 0,
        options: dict[str, str] | None = None,
        settings: events_pb2.TableSettings | None = NO_TIMERS,
        command_id: str = "",
    ) -> table_pb2.CreateTableResponse:
        """Create a table and sit at ``seat`` in the same step."""
        request = table_pb2.CreateTableRequest(
            command_id=command_id or str(uuid.uuid4()),
            game=game,
            seats=seats,
            options=common_pb2.GameOptions(values=options or {}),
            seat=seat,
        )
        if settings is not None:
            request.settings.CopyFrom(settings)
        reply: table_pb2.CreateTableResponse = await self.stub.CreateTable(
            request, metadata=self.metadata
        )
        return reply

    async def join(self, table_id: str, seat: int | None = None) -> int:
        request = table_pb2.JoinTableRequest(command_id=str(uuid.uuid4()), table_id=table_id)
        if seat is not None:
            request.seat = seat
        reply = await self.stub.JoinTable(request, metadata=self.metadata)
        return reply.seat

    async def start(self, table_id: str) -> None:
        """Start the game now: free seats go to computer players if the table allows it."""
        await self.stub.StartGame(
            table_pb2.StartGameRequest(command_id=str(uuid.uuid4()), table_id=table_id),
            metadata=self.metadata,
        )

    async def view(self, table_id: str, seat: int | None) -> table_pb2.GetTableResponse:
        request = table_pb2.GetTableRequest(table_id=table_id)
        if seat is not None:
            request.seat = seat
        return await self.stub.GetTable(request, metadata=self.metadata)

    async def move(
        self, table_id: str, seat: int, action: str, command_id: str | None = None
    ) -> table_pb2.MakeMoveResponse:
        return await self.stub.MakeMove(
            table_pb2.MakeMoveRequest(
                command_id=command_id or str(uuid.uuid4()),
                table_id=table_id,
                seat=seat,
                action=action,
            ),
            metadata=self.metadata,
        )

    async def leave(self, table_id: str) -> None:
        await self.stub.LeaveTable(
            table_pb2.LeaveTableRequest(command_id=str(uuid.uuid4()), table_id=table_id),
            metadata=self.metadata,
        )


async def seated_quick_hearts(cluster: Cluster, name: str) -> tuple[str, dict[int, Player]]:
    """A Hearts quick game whose four seats ``name0``..``name3`` have taken: it is running."""
    table_id = await cluster.player("host").create("hearts", 4, {"quick": "true"})
    players = {seat: cluster.player(f"{name}{seat}") for seat in range(4)}
    for seat, player in players.items():
        await player.join(table_id, seat)
    return table_id, players


def pick_action(view: views_pb2.SeatView, rng: Any) -> str:
    """A random legal action from a seat's own view (as a simple client would choose)."""
    action = random_legal_action(view, rng)
    assert action is not None, "the seat to act has no legal action in its view"
    return action


async def play_to_the_end(
    table_id: str, players: dict[int, Player], rng: Any, max_moves: int = 5000
) -> int:
    """Each seat's client plays random legal moves from its own view; returns moves made."""
    moves = 0
    any_player = next(iter(players.values()))
    while moves < max_moves:
        summary = await any_player.view(table_id, None)
        if summary.status == "finished":
            return moves
        to_act = list(summary.game_status.to_act)
        seat = rng.choice(to_act)
        view = (await players[seat].view(table_id, seat)).seat_view
        await players[seat].move(table_id, seat, pick_action(view, rng))
        moves += 1
    raise AssertionError("the game did not end")


__all__ = ["BOT", "Cluster", "Player", "running_rules", "running_table_service"]
