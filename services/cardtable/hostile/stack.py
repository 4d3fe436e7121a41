"""The fuzz run on a stack of its own: NATS, and the rules and table services as processes.

The services run as the operator would run them (one OS process each, configured by the
environment), so a request that kills a process shows up as a dead process, not as a
failed test in the harness's own interpreter.
"""

from __future__ import annotations

from cardtable.bench.stack import system_stack
from cardtable.hostile.fuzz import Progress, run_fuzz
from cardtable.hostile.report import FuzzReport
from cardtable.stack.processes import ServiceProcess


def _dead(services: list[ServiceProcess]) -> list[str]:
    return [
        f"{service.name} process exited with {service.process.returncode}"
        for service in services
        if service.process.poll() is not None
    ]


async def fuzz_stack(requests: int, seed: int, progress: Progress | None = None) -> FuzzReport:
    """Start NATS (``NATS_URL`` or the embedded server), rules and table; fuzz; stop them."""
    async with system_stack(services=("rules", "table"), prefix_stem="fuzz") as stack:
        services = list(stack.services.values())
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
        )
