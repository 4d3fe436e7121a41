"""The one way a service's ``main`` starts: its composition root on the environment."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from cardtable.platform.settings import SettingsError


def run_service(name: str, run: Callable[[Mapping[str, str]], Coroutine[Any, Any, None]]) -> int:
    """Run ``run(os.environ)`` until it returns; a settings problem exits 2 with its message,
    so a misconfigured container fails at once and says which variable is wrong."""
    try:
        asyncio.run(run(os.environ))
    except SettingsError as error:
        print(f"{name} service: {error}", file=sys.stderr)
        return 2
    return 0
