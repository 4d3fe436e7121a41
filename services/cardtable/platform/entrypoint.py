"""The one way a service's ``main`` starts: its composition root on the environment."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from cardtable.platform.settings import SettingsError


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop where it is installed (Linux, macOS), else asyncio's own.

    Every service spends most of its CPU in the event loop and in gRPC/NATS socket handling;
    uvloop does that work in C, which is worth about a tenth of a move's CPU on the table path.
    """
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows has no uvloop
        return None
    return uvloop.new_event_loop


def run_async(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run`` on the loop of :func:`event_loop_factory`."""
    with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
        return runner.run(main)


def run_service(name: str, run: Callable[[Mapping[str, str]], Coroutine[Any, Any, None]]) -> int:
    """Run ``run(os.environ)`` until it returns; a settings problem exits 2 with its message,
    so a misconfigured container fails at once and says which variable is wrong."""
    try:
        run_async(run(os.environ))
    except SettingsError as error:
        print(f"{name} service: {error}", file=sys.stderr)
        return 2
    return 0
