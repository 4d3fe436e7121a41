"""Retrying a start-up step until a dependency answers, within a deadline.

In a cluster every pod starts at once: a service often comes up before its database. Crashing
would work (Kubernetes restarts it) but turns a normal start into a crash loop in the dashboards,
so connections are retried with a capped exponential backoff until a deadline, and only then
does start-up fail, with the last error attached.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from cardtable.platform.logging import BoundLogger

Result = TypeVar("Result")


async def retry_until(
    attempt: Callable[[], Awaitable[Result]],
    *,
    what: str,
    timeout_seconds: float,
    retry_on: tuple[type[BaseException], ...],
    logger: BoundLogger,
    first_delay: float = 0.1,
    max_delay: float = 2.0,
) -> Result:
    """Await ``attempt()`` until it succeeds; errors outside ``retry_on`` are raised at once.

    A wrong password or a missing database will not fix itself, so only errors that mean
    "not there yet" belong in ``retry_on``.
    """
    deadline = time.monotonic() + timeout_seconds
    delay = first_delay
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt()
        except retry_on as error:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{what} still unreachable after {timeout_seconds:g}s "
                    f"and {attempts} attempts: {error!r}"
                ) from error
            logger.warning(
                f"{what} not reachable yet, retrying",
                extra={"error": repr(error), "retry_in_seconds": round(min(delay, remaining), 3)},
            )
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, max_delay)
