"""Structured JSON logs, one object per line, with fields bound to a table or a player.

Log collectors (Loki, Cloud Logging, ...) index JSON fields, so "every event of table 42" is a
query rather than a grep, provided each line carries ``table_id`` as a field and not inside the
message text. ``BoundLogger`` carries such fields along: bind them once where the identifiers
become known and every later line includes them.

    >>> import io
    >>> stream = io.StringIO()
    >>> handler = configure_logging("INFO", service="table", stream=stream, timestamp=False)
    >>> get_logger("table.servicer", table_id="t-42").bind(seat=2).info("card played")
    >>> print(stream.getvalue(), end="")  # doctest: +NORMALIZE_WHITESPACE
    {"level": "INFO", "logger": "table.servicer", "message": "card played",
     "service": "table", "table_id": "t-42", "seat": 2}
    >>> remove_logging(handler)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, TextIO

from pythonjsonlogger.json import JsonFormatter


class JsonLogHandler(logging.StreamHandler[TextIO]):
    """The handler ``configure_logging`` installs; its own class so a second call can replace it."""


def configure_logging(
    level: str,
    *,
    service: str,
    stream: TextIO | None = None,
    timestamp: bool = True,
) -> JsonLogHandler:
    """Send every log record through one JSON handler on the root logger.

    Called once by a service's composition root. Handlers installed by someone else (pytest's
    log capture, for instance) are kept; only a previous JSON handler of ours is replaced, so
    calling this twice does not print each line twice.
    """
    formatter = JsonFormatter(
        ["levelname", "name", "message"],
        rename_fields={"levelname": "level", "name": "logger"},
        static_fields={"service": service},
        timestamp=timestamp,
    )
    handler = JsonLogHandler(stream if stream is not None else sys.stdout)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for previous in [h for h in root.handlers if isinstance(h, JsonLogHandler)]:
        remove_logging(previous)
    root.addHandler(handler)
    root.setLevel(level)
    return handler


def remove_logging(handler: JsonLogHandler) -> None:
    """Detach a handler from ``configure_logging``; tests use it to leave the root logger clean."""
    logging.getLogger().removeHandler(handler)
    handler.close()


class BoundLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger that adds fixed fields (``table_id``, ``player_id``...) to each record.

    Fields passed per call with ``extra=`` are merged over the bound ones, not instead of them,
    which is what the standard ``LoggerAdapter`` would do.
    """

    def __init__(self, logger: logging.Logger, fields: Mapping[str, object]) -> None:
        super().__init__(logger, dict(fields))

    @property
    def fields(self) -> Mapping[str, object]:
        """The fields every record from this logger carries."""
        return self.extra or {}

    def bind(self, **fields: object) -> BoundLogger:
        """A new logger with more fields; this one is left unchanged."""
        return BoundLogger(self.logger, {**self.fields, **fields})

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        """Merge the bound fields under any per-call ``extra``."""
        kwargs["extra"] = {**self.fields, **kwargs.get("extra", {})}
        return msg, kwargs


def get_logger(name: str, **fields: object) -> BoundLogger:
    """The logger called ``name``, with ``fields`` bound to every record."""
    return BoundLogger(logging.getLogger(name), fields)
