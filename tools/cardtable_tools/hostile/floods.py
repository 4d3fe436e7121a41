"""Floods: calls past one of the table service's quotas, and what each refusal must carry.

Each flood uses players of its own, made for it, against the flood replica
(``flood_replica``), and judges every call it makes: a call within the quota gets what such a
call gets, and one past it RESOURCE_EXHAUSTED naming its limit (the number appears in the
sentence), with ``retry-after-ms`` in the trailing metadata where waiting helps (the rate and
the replica's caps, not a player's own tables or streams). Refused calls append nothing; the
replica's ``cardtable_table_quota_refusals_total{limit}`` grows by the refusals seen; and a
flood that is never refused, or refused before its quota is spent, is a problem too.

Calls go one at a time with the stream's last sequence read around each, so each one's events
are known, except the token bucket's bursts: those go at once (as fast as the replica takes
them, far faster than any refill) and only their total is known, which must be nothing.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import grpc

from cardtable_api.table.v1 import table_pb2, table_pb2_grpc
from cardtable_tools.hostile.calls import HostileRequest, sometimes_pipelined, table_call
from cardtable_tools.hostile.flood_replica import FloodReplica
from cardtable_tools.hostile.report import FloodCall
from cardtable_tools.hostile.scene import QUIET_SETTINGS, Client, Scene
from cardtable_tools.hostile.watch_streams import HeldStreams
from cardtable_tools.hostile.wire import Answer, send

OK = grpc.StatusCode.OK
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
RETRY_AFTER = "retry-after-ms"
#: A burst is this many times the bucket's size, sent at once; bursts go until one is refused.
BURST_FACTOR = 2
MAX_BURSTS = 5
#: The replica's caps on watch streams say to retry after at most this long.
WATCH_RETRY_WITHIN_MS = 60_000
WATCH_LABEL = "TableService.WatchTable"


@dataclass
class Flooding:
    """What a flood needs: the flood replica, the scene's tables, the log's last sequence."""

    channel: grpc.aio.Channel
    replica: FloodReplica
    scene: Scene
    last_sequence: Callable[[], Awaitable[int]]
    rng: random.Random


Flood = Callable[[Flooding], Awaitable[list[FloodCall]]]


def refusal_problem(answer: Answer, number: int, *, retry_within_ms: int | None) -> str | None:
    """What a refusal lacks: its limit's number in the sentence, and ``retry-after-ms``
    (required when ``retry_within_ms`` is given, and then at most that)."""
    if not re.search(rf"(?<![\d.]){number}(?![\d.])", answer.details):
        return f"the refusal does not name its limit ({number})"
    if retry_within_ms is None:
        return None
    retry = answer.trailer(RETRY_AFTER)
    if retry is None or not retry.isdigit():
        return f"no {RETRY_AFTER} in the trailing metadata (got {retry!r})"
    if not 1 <= int(retry) <= retry_within_ms:
        return f"{RETRY_AFTER} {retry} is not between 1 and {retry_within_ms}"
    return None


def flagged(calls: list[FloodCall], problem: str) -> list[FloodCall]:
    """``calls`` with ``problem`` on the last of them (a verdict on the flood as a whole)."""
    if not calls:
        return [FloodCall("flood", grpc.StatusCode.UNKNOWN, problem=problem)]
    last = calls[-1]
    joined = problem if last.problem is None else f"{last.problem}; {problem}"
    return [*calls[:-1], replace(last, problem=joined)]


class _Refusals:
    """The replica's count of one limit's refusals, from the start of a flood."""

    def __init__(self, replica: FloodReplica, limit: str) -> None:
        self._replica, self.limit = replica, limit
        self._before = 0.0

    async def start(self) -> _Refusals:
        self._before = await self._replica.refusals(self.limit)
        return self

    async def checked(self, calls: list[FloodCall], seen: int) -> list[FloodCall]:
        """``calls``, flagged unless the count grew by the ``seen`` refusals."""
        counted = await self._replica.refusals(self.limit) - self._before
        if counted == seen:
            return calls
        return flagged(
            calls,
            f"cardtable_table_quota_refusals_total{{limit={self.limit!r}}} grew by "
            f"{counted:g}, not by the {seen} refusals seen",
        )


async def _one(flooding: Flooding, request: HostileRequest) -> tuple[Answer, int]:
    """One call and the events the stream gained while it was answered."""
    before = await flooding.last_sequence()
    answer = await send(flooding.channel, request)
    return answer, await flooding.last_sequence() - before


def _refused(calls: list[FloodCall]) -> int:
    return sum(call.code == EXHAUSTED for call in calls)


# -- the token bucket -------------------------------------------------------------------------
def _stranger_move(table_id: str, player: Client, seat: int) -> HostileRequest:
    """A move at a seat ``player`` does not hold: refused by the seat check once admitted."""
    request = table_pb2.MakeMoveRequest(
        command_id=str(uuid.uuid4()), table_id=table_id, seat=seat, action="pass"
    )
    return table_call("mutation_flood", "MakeMove", request, player.metadata)


async def mutation_flood(flooding: Flooding) -> list[FloodCall]:
    """Bursts of twice the bucket at once, until one is refused; then, after the longest
    wait a refusal can name, one more call, which must be let through.

    A new player's bucket is full: at least ``burst`` calls go through before the first
    refusal, and no more than the burst and what refilled while the bursts ran. The calls
    are unary: a pipelined reply has no trailing metadata to carry ``retry-after-ms``.
    """
    limits = flooding.replica.limits
    rate, burst = limits.mutations_per_second, limits.mutation_burst
    longest_wait_ms = math.ceil(1000 / rate)
    player = flooding.scene.new_client()
    table = flooding.scene.running[0]
    seats = len(table.seats)
    count = await _Refusals(flooding.replica, "mutation_rate").start()
    clock = asyncio.get_running_loop().time
    started = clock()
    calls: list[FloodCall] = []
    for _ in range(MAX_BURSTS):
        before = await flooding.last_sequence()
        answers = await asyncio.gather(
            *(
                send(flooding.channel, _stranger_move(table.table_id, player, index % seats))
                for index in range(BURST_FACTOR * burst)
            )
        )
        appended = await flooding.last_sequence() - before
        burst_calls = [
            FloodCall(
                "TableService.MakeMove",
                answer.code,
                answer.details,
                problem=refusal_problem(answer, rate, retry_within_ms=longest_wait_ms)
                if answer.code == EXHAUSTED
                else None,
            )
            for answer in answers
        ]
        burst_calls[-1] = replace(burst_calls[-1], appended=appended)
        calls.extend(burst_calls)
        if _refused(burst_calls):
            break
    elapsed = clock() - started
    admitted = len(calls) - _refused(calls)
    if not _refused(calls):
        calls = flagged(calls, f"{len(calls)} calls at once and none refused")
    elif admitted < burst:
        calls = flagged(calls, f"only {admitted} calls let through, fewer than the burst")
    elif admitted > burst + rate * elapsed + 1:
        calls = flagged(
            calls, f"{admitted} calls let through in {elapsed:.2f} s: more than the bucket holds"
        )
    await asyncio.sleep(longest_wait_ms / 1000)
    answer, appended = await _one(flooding, _stranger_move(table.table_id, player, 0))
    after_wait = FloodCall("TableService.MakeMove", answer.code, answer.details, appended)
    if answer.code == EXHAUSTED:
        after_wait = replace(after_wait, problem=f"still refused {longest_wait_ms} ms later")
    calls.append(after_wait)
    return await count.checked(calls, _refused(calls))


# -- open tables and seats --------------------------------------------------------------------
def _judged(
    method: str, answer: Answer, appended: int, index: int, limit: int, refused_before: bool
) -> FloodCall:
    """The ``index``-th call (from 0) of a flood whose quota lets ``limit`` through: those
    let through append one batch each; a refusal comes only once the quota is spent, and
    after one, every call is refused."""
    call = FloodCall(method, answer.code, answer.details, appended, admitted=answer.code == OK)
    if answer.code == EXHAUSTED:
        if index < limit:
            return replace(call, problem=f"refused after {index}, before the limit of {limit}")
        return replace(call, problem=refusal_problem(answer, limit, retry_within_ms=None))
    if answer.code == OK and refused_before:
        return replace(call, problem="let through after an earlier call was refused")
    if answer.code == OK and index >= limit:
        return replace(call, problem=f"let through past the limit of {limit}")
    if answer.code == OK and appended != 1:
        return replace(call, problem=f"let through, and appended {appended} batches, not one")
    return call


def _create(kind: str, host: Client) -> HostileRequest:
    request = table_pb2.CreateTableRequest(
        command_id=str(uuid.uuid4()), game="hearts", seats=4, settings=QUIET_SETTINGS
    )
    return table_call(kind, "CreateTable", request, host.metadata)


async def open_tables_flood(flooding: Flooding) -> list[FloodCall]:
    """One player creates two tables more than it may have open: the first ``limit`` are
    created (one batch each), the others refused and nothing appended for them. The calls go
    unary or inside a ``Pipeline``, at random."""
    limit = flooding.replica.limits.open_tables_per_player
    player = flooding.scene.new_client()
    count = await _Refusals(flooding.replica, "open_tables_per_player").start()
    calls: list[FloodCall] = []
    for index in range(limit + 2):
        request = sometimes_pipelined(_create("open_tables_flood", player), flooding.rng)
        answer, appended = await _one(flooding, request)
        calls.append(_judged(request.label, answer, appended, index, limit, _refused(calls) > 0))
    if not _refused(calls):
        calls = flagged(calls, f"{len(calls)} tables created; the limit is {limit}")
    return await count.checked(calls, _refused(calls))


async def _hosted_table(flooding: Flooding) -> tuple[FloodCall, str | None]:
    """A table opened by a new host (within every quota): the call, and the table's id."""
    stub = table_pb2_grpc.TableServiceStub(flooding.channel)
    host = flooding.scene.new_client()
    request = table_pb2.CreateTableRequest(
        command_id=str(uuid.uuid4()), game="hearts", seats=4, settings=QUIET_SETTINGS
    )
    before = await flooding.last_sequence()
    try:
        reply = await stub.CreateTable(request, metadata=host.metadata)
    except grpc.aio.AioRpcError as error:
        appended = await flooding.last_sequence() - before
        answer = Answer(error.code(), error.details() or "")
        return _judged("TableService.CreateTable", answer, appended, 0, 1, False), None
    appended = await flooding.last_sequence() - before
    call = _judged("TableService.CreateTable", Answer(OK), appended, 0, 1, False)
    return call, reply.table_id


async def seats_flood(flooding: Flooding) -> list[FloodCall]:
    """New hosts each open a table; one player takes a seat at each, two more than the seats
    a player may hold: ``limit`` are let through and the rest refused; a refusal too early, a
    seat past the limit, or a refused join that appended, is a finding."""
    limit = flooding.replica.limits.seats_per_player
    scene = flooding.scene
    player = scene.new_client()
    count = await _Refusals(flooding.replica, "seats_per_player").start()
    calls: list[FloodCall] = []
    joins: list[FloodCall] = []
    for index in range(limit + 2):
        created, table_id = await _hosted_table(flooding)
        calls.append(created)
        if table_id is None:
            continue
        join = table_pb2.JoinTableRequest(command_id=str(uuid.uuid4()), table_id=table_id, seat=0)
        request = sometimes_pipelined(
            table_call("seats_flood", "JoinTable", join, player.metadata), flooding.rng
        )
        answer, appended = await _one(flooding, request)
        joins.append(_judged(request.label, answer, appended, index, limit, _refused(joins) > 0))
        calls.append(joins[-1])
    return await count.checked(calls, _refused(joins))


# -- watch streams ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _WatchPlan:
    """Who holds streams up to a cap, who is then refused, and who is still let in."""

    limit: str
    number: int
    holders: list[Client | None]
    refused: list[Client | None]
    #: Watchers the cap does not apply to, let in while it is full.
    still_admitted: list[Client | None]
    retry_within_ms: int | None


async def _watch_flood(flooding: Flooding, plan: _WatchPlan) -> list[FloodCall]:
    """Hold ``plan.holders``' streams; ``plan.refused`` are refused, ``plan.still_admitted``
    let in; all are closed; then the first refused watcher is let in (the streams were given
    back). Streams watch the scene's open table, whose history is their first message."""
    table_id = flooding.scene.open_table.table_id if flooding.scene.open_table else ""
    count = await _Refusals(flooding.replica, plan.limit).start()
    calls: list[FloodCall] = []

    def judged(answer: Answer, refusal_expected: bool) -> FloodCall:
        call = FloodCall(WATCH_LABEL, answer.code, answer.details)
        if answer.code == EXHAUSTED and refusal_expected:
            problem = refusal_problem(answer, plan.number, retry_within_ms=plan.retry_within_ms)
            return replace(call, problem=problem)
        if answer.code == EXHAUSTED:
            return replace(call, problem=f"refused while within the {plan.limit} limit")
        if refusal_expected:
            return replace(call, problem=f"let in past the {plan.limit} limit of {plan.number}")
        return call

    async with HeldStreams(flooding.channel, table_id) as held:
        for watcher in plan.holders:
            calls.append(judged(await held.open(watcher), refusal_expected=False))
        for watcher in plan.refused:
            calls.append(judged(await held.open(watcher), refusal_expected=True))
        for watcher in plan.still_admitted:
            calls.append(judged(await held.open(watcher), refusal_expected=False))
    if not await flooding.replica.watches_ended():
        return flagged(calls, "closed streams still open on the replica")
    async with HeldStreams(flooding.channel, table_id) as held:
        again = judged(await held.open(plan.refused[0]), refusal_expected=False)
    if again.code == EXHAUSTED:
        again = replace(again, problem=f"still refused once the {plan.limit} streams closed")
    calls.append(again)
    if not await flooding.replica.watches_ended():
        calls = flagged(calls, "a closed stream still open on the replica")
    return await count.checked(calls, _refused(calls))


async def player_watch_flood(flooding: Flooding) -> list[FloodCall]:
    """One player's streams past the per-player limit; another player is still let in."""
    limits, scene = flooding.replica.limits, flooding.scene
    player = scene.new_client()
    plan = _WatchPlan(
        "watches_per_player",
        limits.watches_per_player,
        holders=[player] * limits.watches_per_player,
        refused=[player],
        still_admitted=[scene.new_client()],
        retry_within_ms=None,
    )
    return await _watch_flood(flooding, plan)


async def anonymous_watch_flood(flooding: Flooding) -> list[FloodCall]:
    """Streams without a token past the replica's anonymous cap; a player is still let in."""
    limits = flooding.replica.limits
    plan = _WatchPlan(
        "anonymous_watches",
        limits.anonymous_watches_per_replica,
        holders=[None] * limits.anonymous_watches_per_replica,
        refused=[None],
        still_admitted=[flooding.scene.new_client()],
        retry_within_ms=WATCH_RETRY_WITHIN_MS,
    )
    return await _watch_flood(flooding, plan)


async def replica_watch_flood(flooding: Flooding) -> list[FloodCall]:
    """Players' streams, each within its own limit, up to the replica's cap; then a new
    player and a watcher without a token are refused."""
    limits, scene = flooding.replica.limits, flooding.scene
    players = math.ceil(limits.watches_per_replica / limits.watches_per_player)
    holders: list[Client | None] = []
    for _ in range(players):
        holders.extend([scene.new_client()] * limits.watches_per_player)
    del holders[limits.watches_per_replica :]
    plan = _WatchPlan(
        "watches_per_replica",
        limits.watches_per_replica,
        holders=holders,
        refused=[scene.new_client(), None],
        still_admitted=[],
        retry_within_ms=WATCH_RETRY_WITHIN_MS,
    )
    return await _watch_flood(flooding, plan)


FLOODS: dict[str, Flood] = {
    "mutation_flood": mutation_flood,
    "open_tables_flood": open_tables_flood,
    "seats_flood": seats_flood,
    "player_watch_flood": player_watch_flood,
    "anonymous_watch_flood": anonymous_watch_flood,
    "replica_watch_flood": replica_watch_flood,
}
