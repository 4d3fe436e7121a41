"""The table service as the bot service uses it: the same gRPC API a person's client uses.

Every call carries a bot token this service signs itself (``kind: bot``), naming the one seat
it is for: a seat this replica claimed. The table service lets such a token view and act for
that seat while a computer player holds it, and nothing else: a bot never sees another seat's
cards or the event log.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import grpc

from cardtable.platform.tokens import BOT, TokenCodec
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

if TYPE_CHECKING:
    WatchCall = grpc.aio.UnaryStreamCall[Any, table_pb2.WatchTableResponse]
else:  # the runtime class is not generic
    WatchCall = grpc.aio.UnaryStreamCall

#: Unary calls that take longer than this are abandoned and retried.
CALL_TIMEOUT_SECONDS = 10.0
TOKEN_TTL_SECONDS = 3600.0
#: Seats' tokens kept for reuse (signing one costs more than a move's other work).
MAX_CACHED_TOKENS = 4096


class BotCredentials:
    """A bot token for this replica, signed again well before it expires."""

    def __init__(self, tokens: TokenCodec, player_id: str) -> None:
        self._tokens = tokens
        self.player_id = player_id
        self._tokens_by_seat: dict[tuple[str, int | None], tuple[tuple[str, str], ...]] = {}
        self._renew_at = 0.0

    def metadata(self, table_id: str, seat: int | None) -> tuple[tuple[str, str], ...]:
        """The token for one claimed seat (None: a spectator's, which names no seat)."""
        now = time.monotonic()
        if now >= self._renew_at:
            self._tokens_by_seat.clear()
            self._renew_at = now + TOKEN_TTL_SECONDS / 2
        key = (table_id, seat)
        metadata = self._tokens_by_seat.get(key)
        if metadata is None:
            token = self._tokens.issue(
                self.player_id,
                BOT,
                ttl_seconds=TOKEN_TTL_SECONDS,
                bot_seat=None if seat is None else (table_id, seat),
            )
            metadata = self._tokens_by_seat[key] = (("authorization", f"Bearer {token}"),)
            if len(self._tokens_by_seat) > MAX_CACHED_TOKENS:
                self._tokens_by_seat.pop(next(iter(self._tokens_by_seat)))
        return metadata


class TableClient:
    """The few TableService calls a computer player makes."""

    def __init__(self, channel: grpc.aio.Channel, credentials: BotCredentials) -> None:
        self._stub = table_pb2_grpc.TableServiceStub(channel)
        self._credentials = credentials

    @property
    def player_id(self) -> str:
        return self._credentials.player_id

    async def get_table(self, table_id: str, seat: int | None = None) -> table_pb2.GetTableResponse:
        """The table as a spectator (``seat`` None) or as one of the bot-held seats."""
        request = table_pb2.GetTableRequest(table_id=table_id)
        if seat is not None:
            request.seat = seat
        return await self._stub.GetTable(
            request,
            metadata=self._credentials.metadata(table_id, seat),
            timeout=CALL_TIMEOUT_SECONDS,
        )

    async def make_move(
        self, table_id: str, seat: int, action: str, command_id: str, expected_version: int
    ) -> table_pb2.MakeMoveResponse:
        request = table_pb2.MakeMoveRequest(
            command_id=command_id,
            table_id=table_id,
            seat=seat,
            action=action,
            expected_version=expected_version,
        )
        return await self._stub.MakeMove(
            request,
            metadata=self._credentials.metadata(table_id, seat),
            timeout=CALL_TIMEOUT_SECONDS,
        )

    def watch(self, table_id: str, from_version: int) -> WatchCall:
        """The table's public events after ``from_version``, as they happen (a spectator's).

        The caller cancels the call when it no longer wants it.
        """
        request = table_pb2.WatchTableRequest(table_id=table_id, from_version=from_version)
        return self._stub.WatchTable(request, metadata=self._credentials.metadata(table_id, None))

    async def running_tables(self, page_size: int = 200) -> list[table_pb2.TableSummary]:
        """Every running table the lobby lists."""
        tables: list[table_pb2.TableSummary] = []
        token = ""
        while True:
            reply = await self._stub.ListTables(
                table_pb2.ListTablesRequest(
                    status="running", page_size=page_size, page_token=token
                ),
                timeout=CALL_TIMEOUT_SECONDS,
            )
            tables.extend(reply.tables)
            token = reply.next_page_token
            if not token:
                return tables
