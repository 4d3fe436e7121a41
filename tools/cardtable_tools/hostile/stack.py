"""The fuzz run on a stack of its own: NATS, and the rules and table services as processes.

The services run as the operator would run them (one OS process each, configured by the
environment), so a request that kills a process shows up as a dead process, not as a
failed test in the harness's own interpreter. A second table-service process, on the same
log with the flood limits (``flood_replica``), is where the floods go.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Collection, Mapping

from cardtable_tools.bench.stack import system_stack
from cardtable_tools.hostile.flood_replica import FloodLimits, FloodReplica
from cardtable_tools.hostile.fuzz import Progress, run_fuzz
from cardtable_tools.hostile.report import FuzzReport
from cardtable_tools.stack.processes import ServiceProcess, start

#: Settings each process gets a fresh value of, not copied from the replica it joins.
OWN_SETTINGS = ("GRPC_PORT", "METRICS_PORT")


def _dead(services: Mapping[str, ServiceProcess]) -> list[str]:
    return [
        f"{name} process exited with {service.process.returncode}"
        for name, service in services.items()
        if service.process.poll() is not None
    ]


@contextlib.asynccontextmanager
async def flood_replica(
    table: ServiceProcess, limits: FloodLimits
) -> AsyncIterator[tuple[FloodReplica, ServiceProcess]]:
    """Another table-service process with ``table``'s settings and ``limits``; stopped at
    the end."""
    settings = {key: value for key, value in table.env.items() if key not in OWN_SETTINGS}
    replica = await start("table", {**settings, **limits.environment()})
    try:
        yield FloodReplica(replica.address, replica.metrics_port, limits), replica
    finally:
        replica.terminate()


async def fuzz_stack(
    requests: int,
    seed: int,
    progress: Progress | None = None,
    limits: FloodLimits | None = None,
    kinds: Collection[str] | None = None,
) -> FuzzReport:
    """Start NATS (``NATS_URL`` or the embedded server), rules, table and the flood replica
    (with ``limits``); fuzz (``kinds`` only, when given); stop them."""
    async with (
        system_stack(services=("rules", "table"), prefix_stem="fuzz") as stack,
        flood_replica(stack.services["table"], limits or FloodLimits()) as (replica, process),
    ):
        services = {**stack.services, "flood table replica": process}
        return await run_fuzz(
            stack.table_address,
            stack.services["rules"].address,
            stack.nats_url,
            stack.prefix,
            stack.signing_key,
            requests,
            seed,
            progress,
            liveness=lambda: _dead(services),
            flood_replica=replica,
            kinds=kinds,
        )
