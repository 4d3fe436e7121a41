"""The fuzz run on a stack of its own: NATS, and the rules and table services as processes.

The services run as the operator would run them (one OS process each, configured by the
environment), so a request that kills a process shows up as a dead process, not as a
failed test in the harness's own interpreter.
"""

from __future__ import annotations

import contextlib
import os
import secrets

from cardtable.hostile.fuzz import Progress, run_fuzz
from cardtable.hostile.report import FuzzReport
from cardtable.platform.dev_servers import async_dev_servers
from cardtable.stack.processes import ServiceProcess, start


def _dead(services: list[ServiceProcess]) -> list[str]:
    return [
        f"{service.name} process exited with {service.process.returncode}"
        for service in services
        if service.process.poll() is not None
    ]


async def fuzz_stack(requests: int, seed: int, progress: Progress | None = None) -> FuzzReport:
    """Start NATS (``NATS_URL`` or the embedded server), rules and table; fuzz; stop them."""
    key = secrets.token_hex(32)
    prefix = f"fuzz{secrets.token_hex(3)}"
    async with contextlib.AsyncExitStack() as stack:
        nats_url = os.environ.get("NATS_URL")
        if not nats_url:
            servers = await stack.enter_async_context(async_dev_servers(postgres=False))
            nats_url = servers.nats_url
        rules = await start("rules", {})
        stack.callback(rules.terminate)
        table = await start(
            "table",
            {
                "NATS_URL": nats_url,
                "RULES_ADDRESS": rules.address,
                "TOKEN_SIGNING_KEY": key,
                "EVENT_PREFIX": prefix,
            },
        )
        stack.callback(table.terminate)
        services = [rules, table]
        return await run_fuzz(
            table.address,
            rules.address,
            nats_url,
            prefix,
            key,
            requests,
            seed,
            progress,
            liveness=lambda: _dead(services),
        )
