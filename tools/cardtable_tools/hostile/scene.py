"""The legitimate side of a fuzz run: tables played by well-behaved clients.

Hostile requests need real targets (a running game with a seat to act, an open table, a
finished one) and the games must move through their phases while the fuzz runs, so the
harness plays legal moves between hostile ones. Every legal move is chosen from the seat's own
view (its ``legal_actions`` or ``choose_cards``) as the table service returns it: the harness
knows no game rule.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from cardtable.client.views import random_legal_action
from cardtable.platform.tokens import TokenCodec
from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

#: No turn timer and no bot filling: nothing but the harness writes to the stream.
QUIET_SETTINGS = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False)
#: The games kept running, with their seat counts (Whist's varies) and options.
GAMES: tuple[tuple[str, tuple[int, ...], dict[str, str]], ...] = (
    ("hearts", (4,), {"quick": "true"}),
    ("whist", (3, 4, 5, 6), {}),
    ("358", (3,), {}),
    ("belote", (4,), {}),
)
RUNNING, OPEN, FINISHED = "running", "open", "finished"


@dataclass(frozen=True)
class Client:
    """One player: an id and a token signed with the service's key."""

    player_id: str
    token: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


@dataclass
class LiveTable:
    """What the harness knows of one of its tables (refreshed after each legal move)."""

    table_id: str
    game: str
    seats: list[Client]
    status: str = OPEN
    version: int = 0
    to_act: list[int] = field(default_factory=list)
    #: Applied MakeMove requests (bytes, metadata), for replays.
    applied: list[tuple[bytes, tuple[tuple[str, str], ...]]] = field(default_factory=list)
    _views: dict[int, views_pb2.SeatView] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """A seat to act, its client, its view and one legal action from that view."""

    table: LiveTable
    seat: int
    client: Client
    view: views_pb2.SeatView
    action: str


def pick_action(view: views_pb2.SeatView, rng: random.Random) -> str:
    """A legal action from a seat's own view (the seat is one that is to act)."""
    action = random_legal_action(view, rng)
    if action is None:
        raise RuntimeError("the view of a seat to act lists no legal action")
    return action


class Scene:
    """The harness's tables: one open, one running per game, and the finished ones."""

    def __init__(
        self, stub: table_pb2_grpc.TableServiceAsyncStub, tokens: TokenCodec, rng: random.Random
    ) -> None:
        self._stub = stub
        self._tokens = tokens
        self._rng = rng
        self.run_id = uuid.UUID(int=rng.getrandbits(128)).hex[:10]
        self._players = 0
        self.open_table: LiveTable | None = None
        self.running: list[LiveTable] = []
        self.finished: list[LiveTable] = []
        #: Every action text seen legal somewhere: material for out-of-phase moves.
        self.vocabulary: set[str] = set()
        #: Clients of no table, and every client ever made (for replayed tokens).
        self.outsiders = [self.new_client() for _ in range(3)]

    def new_client(self, kind: str = "person") -> Client:
        self._players += 1
        player_id = f"fuzz-{self.run_id}-{self._players}"
        return Client(player_id, self._tokens.issue(player_id, kind))

    def tables(self) -> list[LiveTable]:
        own = [self.open_table] if self.open_table else []
        return [*own, *self.running, *self.finished]

    # -- building -----------------------------------------------------------------------------
    async def create(self, game: str, seats: int, options: dict[str, str], fill: int) -> LiveTable:
        """A table of ``game`` with ``fill`` of its seats taken by new clients."""
        host = self.new_client()
        reply = await self._stub.CreateTable(
            table_pb2.CreateTableRequest(
                command_id=str(uuid.uuid4()),
                game=game,
                seats=seats,
                options=common_pb2.GameOptions(values=options),
                settings=QUIET_SETTINGS,
            ),
            metadata=host.metadata,
        )
        clients = [host, *(self.new_client() for _ in range(seats - 1))]
        table = LiveTable(reply.table_id, game, clients)
        for seat in range(fill):
            await self._stub.JoinTable(
                table_pb2.JoinTableRequest(
                    command_id=str(uuid.uuid4()), table_id=table.table_id, seat=seat
                ),
                metadata=clients[seat].metadata,
            )
        await self.refresh(table)
        return table

    async def set_up(self) -> None:
        """An open table, one running table per game, and one game played to its end."""
        self.open_table = await self.create("belote", 4, {}, fill=1)
        for index in range(len(GAMES)):
            self.running.append(await self._new_running(index))
        finished = await self._new_running(0)
        while finished.status == RUNNING:
            await self.play(finished)
        self.finished.append(finished)

    async def _new_running(self, index: int) -> LiveTable:
        game, seat_counts, options = GAMES[index]
        seats = self._rng.choice(seat_counts)
        return await self.create(game, seats, options, fill=seats)

    # -- reading ------------------------------------------------------------------------------
    async def refresh(self, table: LiveTable) -> None:
        """Status, version and seats to act, as a spectator sees them."""
        reply = await self._stub.GetTable(table_pb2.GetTableRequest(table_id=table.table_id))
        table.status, table.version = reply.status, reply.version
        table.to_act = list(reply.game_status.to_act) if reply.status == RUNNING else []
        table._views.clear()

    async def view(self, table: LiveTable, seat: int) -> views_pb2.SeatView:
        """The seat's own view (cached until the table changes)."""
        if seat not in table._views:
            reply = await self._stub.GetTable(
                table_pb2.GetTableRequest(table_id=table.table_id, seat=seat),
                metadata=table.seats[seat].metadata,
            )
            view = reply.seat_view
            table._views[seat] = view
            self.vocabulary.update(legal.action for legal in view.legal_actions)
        return table._views[seat]

    async def turn(self, table: LiveTable | None = None) -> Turn:
        """A seat to act at ``table`` (or a random running table) and a legal action."""
        table = table or self._rng.choice(self.running)
        seat = self._rng.choice(table.to_act)
        view = await self.view(table, seat)
        return Turn(table, seat, table.seats[seat], view, pick_action(view, self._rng))

    # -- playing ------------------------------------------------------------------------------
    async def play(self, table: LiveTable | None = None) -> table_pb2.MakeMoveResponse:
        """One legal move; a table whose game ends is replaced by a new one of its game."""
        turn = await self.turn(table)
        request = table_pb2.MakeMoveRequest(
            command_id=str(uuid.uuid4()),
            table_id=turn.table.table_id,
            seat=turn.seat,
            action=turn.action,
        )
        reply = await self._stub.MakeMove(request, metadata=turn.client.metadata)
        turn.table.applied.append((request.SerializeToString(), turn.client.metadata))
        await self.refresh(turn.table)
        if turn.table.status == FINISHED and turn.table in self.running:
            index = self.running.index(turn.table)
            self.finished = [*self.finished[-3:], turn.table]
            self.running[index] = await self._new_running(index)
        return reply
