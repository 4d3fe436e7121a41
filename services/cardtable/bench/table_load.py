"""Moves per second through the table service over gRPC, with many tables played at once.

Each simulated table has four clients that play Hearts quick games over and over: a client
reads its own view (GetTable as its seat) and makes a random legal move (MakeMove), exactly
like a person's client would. Only MakeMove calls count as moves; their latency is measured
from the client's side. An optional target rate paces the clients to measure latency below
saturation.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardtable.client.views import random_legal_action
from cardtable.table_service.auth import TokenCodec
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

NO_TIMERS = events_pb2.TableSettings(turn_timer_ms=0, fill_with_bots=False)


@dataclass
class LoadResult:
    tables: int
    seconds: float
    moves: int = 0
    games: int = 0
    errors: int = 0
    errors_by_code: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)

    def percentile(self, share: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    def summary(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "seconds": round(self.seconds, 2),
            "moves": self.moves,
            "games": self.games,
            "errors": self.errors,
            "errors_by_code": dict(self.errors_by_code),
            "moves_per_s": round(self.moves / self.seconds, 1) if self.seconds else 0.0,
            "move_latency_p50_ms": round(self.percentile(0.50), 2),
            "move_latency_p95_ms": round(self.percentile(0.95), 2),
            "move_latency_p99_ms": round(self.percentile(0.99), 2),
        }


async def _play_table(
    stub: table_pb2_grpc.TableServiceAsyncStub,
    tokens: TokenCodec,
    result: LoadResult,
    deadline: float,
    rng: random.Random,
    interval: float,
) -> None:
    if interval:  # spread the paced tables over the interval instead of moving in step
        await asyncio.sleep(rng.uniform(0, interval))
    players = [f"load-{uuid.uuid4().hex[:12]}" for _ in range(4)]
    metadata = [(("authorization", f"Bearer {tokens.issue(player)}"),) for player in players]
    while time.perf_counter() < deadline:
        created = await stub.CreateTable(
            table_pb2.CreateTableRequest(
                command_id=str(uuid.uuid4()),
                game="hearts",
                options=common_pb2.GameOptions(values={"quick": "true"}),
                settings=NO_TIMERS,
            ),
            metadata=metadata[0],
        )
        table_id = created.table_id
        for seat in range(4):
            await stub.JoinTable(
                table_pb2.JoinTableRequest(
                    command_id=str(uuid.uuid4()), table_id=table_id, seat=seat
                ),
                metadata=metadata[seat],
            )
        to_act = [0, 1, 2, 3]
        while time.perf_counter() < deadline:
            seat = rng.choice(to_act)
            view = await stub.GetTable(
                table_pb2.GetTableRequest(table_id=table_id, seat=seat), metadata=metadata[seat]
            )
            action = random_legal_action(view.view, rng)
            if action is None:  # not this seat's turn after all (another seat moved first)
                continue
            next_move = time.perf_counter() + interval
            started = time.perf_counter()
            try:
                reply = await stub.MakeMove(
                    table_pb2.MakeMoveRequest(
                        command_id=str(uuid.uuid4()), table_id=table_id, seat=seat, action=action
                    ),
                    metadata=metadata[seat],
                )
            except grpc.aio.AioRpcError as error:
                result.errors += 1
                code = error.code().name
                result.errors_by_code[code] = result.errors_by_code.get(code, 0) + 1
                continue
            result.latencies_ms.append((time.perf_counter() - started) * 1000)
            result.moves += 1
            if reply.status.over:
                result.games += 1
                break
            to_act = list(reply.status.to_act)
            pause = next_move - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)


async def run_load(
    address: str,
    tokens: TokenCodec,
    tables: int,
    seconds: float,
    target_moves_per_s: float | None = None,
) -> LoadResult:
    """Play ``tables`` tables at once for ``seconds``; pace to a target rate if given."""
    interval = tables / target_moves_per_s if target_moves_per_s else 0.0
    result = LoadResult(tables=tables, seconds=seconds)
    async with grpc.aio.insecure_channel(address) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(
            *(
                _play_table(stub, tokens, result, deadline, random.Random(index), interval)
                for index in range(tables)
            )
        )
        result.seconds = time.perf_counter() - started
    return result
