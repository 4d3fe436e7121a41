"""Run hostile requests against running rules and table services and judge every answer.

Requests go one at a time, so the event stream's last sequence read before and after each
one says exactly what that request appended: the harness is the only writer on its stream
(its tables have no timers and no computer players). Legal moves are made between hostile
requests so games move through their phases; what they append is counted apart. After every
batch both services must answer their health check SERVING.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.js import JetStreamContext

from cardtable.hostile.calls import RULES_SERVICE, TABLE_SERVICE, HostileRequest, Material
from cardtable.hostile.kinds import KINDS
from cardtable.hostile.report import FuzzReport
from cardtable.hostile.requests import generators
from cardtable.hostile.rules_states import collect_states
from cardtable.hostile.scene import Scene
from cardtable.platform.log_names import LogNames
from cardtable.platform.nats import connect_nats
from cardtable.table_service.auth import TokenCodec
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc
from cardtable_api.table.v1 import table_pb2, table_pb2_grpc

CALL_TIMEOUT_SECONDS = 20.0
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
#: One legal move after this many hostile requests.
HOSTILE_PER_LEGAL_MOVE = 3
#: Health is checked after each batch of this many requests.
BATCH = 50
#: What each service's ``Pipeline`` answers with.
PIPELINE_RESPONSES: dict[
    str, type[rules_pb2.PipelineResponse] | type[table_pb2.PipelineResponse]
] = {
    RULES_SERVICE: rules_pb2.PipelineResponse,
    TABLE_SERVICE: table_pb2.PipelineResponse,
}

Progress = Callable[[int, int], None]
Liveness = Callable[[], list[str]]


async def send(channel: grpc.aio.Channel, request: HostileRequest) -> tuple[grpc.StatusCode, str]:
    """The status code and details of one raw call (a stream's first message means OK)."""
    try:
        if request.pipelined:
            return await _send_pipelined(channel, request)
        if request.streaming:
            call = channel.unary_stream(request.path, None, None)(
                request.payload, metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
            )
            try:
                async for _ in call:
                    break
            finally:
                call.cancel()
        else:
            await channel.unary_unary(request.path, None, None)(
                request.payload, metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
            )
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    return grpc.StatusCode.OK, ""


async def _send_pipelined(
    channel: grpc.aio.Channel, request: HostileRequest
) -> tuple[grpc.StatusCode, str]:
    """One ``Pipeline`` message; its call's status is the status of its reply."""
    call = channel.stream_stream(request.path, None, None)(  # type: ignore[call-arg]
        metadata=request.metadata, timeout=CALL_TIMEOUT_SECONDS
    )
    try:
        await call.write(request.payload)
        await call.done_writing()
        answer = await call.read()
        if not isinstance(answer, bytes):  # grpc.aio.EOF: the stream ended without a reply
            return await call.code(), await call.details()
    finally:
        call.cancel()
    replies = PIPELINE_RESPONSES[request.service].FromString(answer).replies
    if len(replies) != 1:
        return grpc.StatusCode.INTERNAL, f"{len(replies)} replies to one call"
    if replies[0].HasField("failed"):
        failed = replies[0].failed
        return _STATUS_CODES.get(failed.code, grpc.StatusCode.UNKNOWN), failed.message
    return grpc.StatusCode.OK, ""


async def serving(channel: grpc.aio.Channel) -> str | None:
    """None when the server answers SERVING, else what went wrong."""
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
    except grpc.aio.AioRpcError as error:
        return f"health check failed: {error.code().name} {error.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"health status {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def schedule(requests: int, rng: random.Random) -> list[str]:
    """Each kind once (so every kind is tried), then kinds drawn by weight."""
    names = [kind.name for kind in KINDS][:requests]
    weights = [kind.weight for kind in KINDS]
    drawn = rng.choices([kind.name for kind in KINDS], weights, k=requests - len(names))
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
    ) -> None:
        self.addresses = {"table": table_address, "rules": rules_address}
        self.table = grpc.aio.insecure_channel(table_address)
        self.rules = grpc.aio.insecure_channel(rules_address)
        self._js = jetstream
        self._stream = stream
        self.report = report
        self._liveness = liveness

    async def close(self) -> None:
        await self.table.close(None)
        await self.rules.close(None)

    async def last_sequence(self) -> int:
        info = await self._js.stream_info(self._stream)
        return int(info.state.last_seq)

    async def hostile(self, request: HostileRequest) -> None:
        before = await self.last_sequence()
        if request.own_channel:
            address = self.addresses["rules" if request.service == RULES_SERVICE else "table"]
            async with grpc.aio.insecure_channel(address) as channel:
                code, details = await send(channel, request)
        else:
            channel = self.rules if request.service == RULES_SERVICE else self.table
            code, details = await send(channel, request)
        appended = await self.last_sequence() - before
        self.report.record(request.kind, request.label, code, details, appended)

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
        for name, channel in (("table", self.table), ("rules", self.rules)):
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
) -> FuzzReport:
    """Send ``requests`` hostile requests (kinds drawn from ``seed``) and judge each answer.

    ``event_prefix`` and ``signing_key`` are the table service's ``EVENT_PREFIX`` and
    ``TOKEN_SIGNING_KEY``; nothing else may write to that stream during the run.
    ``liveness`` names dead service processes, when the caller owns them.
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
    )
    try:
        scene = Scene(table_pb2_grpc.TableServiceStub(fuzzer.table), TokenCodec(signing_key), rng)
        await scene.set_up()
        states = await collect_states(rules_pb2_grpc.RulesServiceStub(fuzzer.rules), rng)
        material = Material(scene, states, signing_key, rng)
        makers = generators()
        started = time.perf_counter()
        for done, kind in enumerate(schedule(requests, rng), start=1):
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
