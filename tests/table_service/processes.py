"""Table services as separate OS processes, for tests that kill and restart them."""

from __future__ import annotations

from cardtable_tools.stack.processes import ServiceProcess, start
from tests.table_service.harness import SIGNING_KEY, TEST_LIMITS, log_security


async def start_table_process(nats_url: str, prefix: str, rules_address: str) -> ServiceProcess:
    """A table service process on the test's stream names, once it reports SERVING."""
    return await start(
        "table",
        {
            "NATS_URL": nats_url,
            "RULES_ADDRESS": rules_address,
            "TOKEN_SIGNING_KEY": SIGNING_KEY,
            "MIN_TURN_TIMER_MS": str(TEST_LIMITS.min_turn_timer_ms),
            **log_security(prefix).environment(),
            "EVENT_PREFIX": prefix,
        },
    )
