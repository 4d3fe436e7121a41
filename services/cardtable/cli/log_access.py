"""Where the operator's commands find the event log: the environment, read once, through the
same settings every component reads (platform/settings.py)."""

from __future__ import annotations

import os

from cardtable.platform.settings import LogReadingSettings, SettingsError


def log_settings() -> LogReadingSettings:
    """``NATS_URL``, ``EVENT_PREFIX`` and the operator's NATS user; ``RuntimeError`` saying
    what is missing or wrong, for the command to print."""
    try:
        return LogReadingSettings.from_env(os.environ)
    except SettingsError as error:
        problems = "; ".join(error.problems)
        raise RuntimeError(f"cannot read the event log: {problems}") from None
