"""Run hostile requests against running rules and table services and judge every answer.

Requests go one at a time, so the event stream's last sequence read before and after each
one says exactly what that request appended: the harness is the only writer on its stream
(its tables have no timers and no computer players). Legal moves are made between hostile
requests so games move through their phases; what they append is counted apart. After every
batch both services must answer their health check SERVING.

Floods (``floods``) go to a table-service replica of their own on the same log, whose quotas
they pass; the other kinds' replica lifts the per-player rate, so that their players, whose
seats they target many times a second, are never throttled into answers their kinds do not
expect (``flood_replica``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection

import grpc
from nats.js import JetStreamContext

from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import connect_nats
from cardtable.platform.tokens import TokenCodec
from cardtable_api.rules.v1 import rules_pb2_grpc
from cardtable_api.table.v1 import table_pb2_grpc
from cardtable_tools.hostile.calls import RULES_SERVICE, HostileRequest, Material
from cardtable_tools.hostile.flood_replica import FloodReplica
from cardtable_tools.hostile.floods import FLOODS, Flooding
from cardtable_tools.hostile.kinds import KINDS
from cardtable_tools.hostile.report import FuzzReport
from cardtable_tools.hostile.requests import generators
from cardtable_tools.hostile.rules_states import collect_states
from cardtable_tools.hostile.scene import Scene
from cardtable_tools.hostile.wire import send, serving

#: One legal move after this many hostile requests.
HOSTILE_PER_LEGAL_MOVE = 3
#: Health is checked after each batch of this many requests.
BATCH = 50

Progress = Callable[[int, int], None]
Liveness = Callable[[], list[str]]


def schedule(
    requests: int, rng: random.Random, only: Collection[str] | None = None, floods: bool = True
) -> list[str]:
    """Each kind once (so every kind is tried), then kinds drawn by weight; ``only`` these
    kinds when given, and the flood kinds only with ``floods`` (they need the flood replica)."""
    kinds = [
        kind for kind in KINDS if (only is None or kind.name in only) and (floods or not kind.flood)
    ]
    names = [kind.name for kind in kinds][:requests]
    weights = [kind.weight for kind in kinds]
    drawn = rng.choices([kind.name for kind in kinds], weights, k=requests - len(names))
    return [*names, *drawn]


class _Fuzzer:
    """One run's connections and bookkeeping."""

    def __init__(
        self,
        table_address: str,
        rules_address: str,
        jetstream: JetStreamContext,
        stream: str,
        report: FuzzReport,
        liveness: Liveness | None,
        flood_address: str | None,
    ) -> None:
        self.addresses = {"table": table_address, "rules": rules_address}
        self.table = grpc.aio.insecure_channel(table_address)
        self.rules = grpc.aio.insecure_channel(rules_address)
        self.flood_channel = grpc.aio.insecure_channel(flood_address) if flood_address else None
        self._js = jetstream
        self._stream = stream
        self.report = report
        self._liveness = liveness

    async def close(self) -> None:
        await self.table.close(None)
        await self.rules.close(None)
        if self.flood_channel is not None:
            await self.flood_channel.close(None)

    async def last_sequence(self) -> int:
        info = await self._js.stream_info(self._stream)
        return int(info.state.last_seq)

    async def hostile(self, request: HostileRequest) -> None:
        before = await self.last_sequence()
        if request.own_channel:
            address = self.addresses["rules" if request.service == RULES_SERVICE else "table"]
            async with grpc.aio.insecure_channel(address) as channel:
                answer = await send(channel, request)
        else:
            channel = self.rules if request.service == RULES_SERVICE else self.table
            answer = await send(channel, request)
        appended = await self.last_sequence() - before
        self.report.record(request.kind, request.label, answer.code, answer.details, appended)

    async def flood(self, kind: str, flooding: Flooding) -> None:
        """One flood, each of its calls judged (it measures what they appended itself)."""
        self.report.record_flood(kind, await FLOODS[kind](flooding))

    async def legal_move(self, scene: Scene) -> None:
        before = await self.last_sequence()
        try:
            await scene.play()
        except grpc.aio.AioRpcError as error:
            self.report.legitimate_failures.append(f"{error.code().name}: {error.details()}")
        self.report.legitimate_moves += 1
        self.report.legitimate_events += await self.last_sequence() - before

    async def check_health(self, after: int) -> None:
        self.report.health_checks += 1
        channels = [("table", self.table), ("rules", self.rules)]
        if self.flood_channel is not None:
            channels.append(("flood table replica", self.flood_channel))
        for name, channel in channels:
            problem = await serving(channel)
            if problem:
                self.report.crashes.append(f"{name} after {after} requests: {problem}")
        for problem in self._liveness() if self._liveness else ():
            self.report.crashes.append(f"after {after} requests: {problem}")


async def run_fuzz(
    table_address: str,
    rules_address: str,
    nats_url: str,
    event_prefix: str,
    signing_key: str,
    requests: int,
    seed: int,
    progress: Progress | None = None,
    liveness: Liveness | None = None,
    flood_replica: FloodReplica | None = None,
    kinds: Collection[str] | None = None,
) -> FuzzReport:
    """Send ``requests`` hostile requests (kinds drawn from ``seed``) and judge each answer.

    ``event_prefix`` and ``signing_key`` are the table service's ``EVENT_PREFIX`` and
    ``TOKEN_SIGNING_KEY``; nothing else may write to that stream during the run.
    ``liveness`` names dead service processes, when the caller owns them.
    ``flood_replica``: where floods go (none are sent without it). ``kinds``: only these.
    """
    rng = random.Random(seed)
    report = FuzzReport(seed=seed)
    connection = await connect_nats(nats_url, name="fuzz")
    fuzzer = _Fuzzer(
        table_address,
        rules_address,
        connection.jetstream,
        LogNames.from_prefix(event_prefix).stream,
        report,
        liveness,
        flood_replica.address if flood_replica else None,
    )
    try:
        scene = Scene(table_pb2_grpc.TableServiceStub(fuzzer.table), TokenCodec(signing_key), rng)
        await scene.set_up()
        states = await collect_states(rules_pb2_grpc.RulesServiceStub(fuzzer.rules), rng)
        material = Material(scene, states, signing_key, rng)
        makers = generators()
        flooding = None
        if fuzzer.flood_channel is not None and flood_replica is not None:
            flooding = Flooding(
                fuzzer.flood_channel, flood_replica, scene, fuzzer.last_sequence, rng
            )
        started = time.perf_counter()
        for done, kind in enumerate(schedule(requests, rng, kinds, floods=bool(flooding)), start=1):
            if flooding is not None and kind in FLOODS:
                await fuzzer.flood(kind, flooding)
            else:
                await fuzzer.hostile(await makers[kind](material))
            if done % HOSTILE_PER_LEGAL_MOVE == 0:
                await fuzzer.legal_move(scene)
            if done % BATCH == 0 or done == requests:
                await fuzzer.check_health(done)
                if progress is not None:
                    progress(done, requests)
        report.seconds = time.perf_counter() - started
    finally:
        await fuzzer.close()
        await connection.close()
    return report
