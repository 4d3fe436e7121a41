"""Logs are one JSON object per line, carrying the identifiers bound to the logger."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from cardtable.platform.logging import configure_logging, get_logger, remove_logging


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = configure_logging("DEBUG", service="table", stream=stream)
    yield stream
    remove_logging(handler)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_bound_fields_and_per_call_extras_appear_as_json_fields(log_stream: io.StringIO) -> None:
    table_log = get_logger("cardtable.table", table_id="t-1")

    table_log.bind(player_id="p-7").info("card played", extra={"card": "QS"})
    table_log.warning("table idle")

    played, idle = lines(log_stream)
    assert played["message"] == "card played"
    assert played["level"] == "INFO"
    assert played["service"] == "table"
    assert (played["table_id"], played["player_id"], played["card"]) == ("t-1", "p-7", "QS")
    assert "timestamp" in played
    assert idle["table_id"] == "t-1"
    assert "player_id" not in idle  # bind() returned a new logger


def test_exceptions_are_logged_inside_the_json_object(log_stream: io.StringIO) -> None:
    try:
        raise ValueError("you must follow hearts")
    except ValueError:
        get_logger("cardtable.table").exception("move rejected")

    (record,) = lines(log_stream)
    assert "ValueError: you must follow hearts" in str(record["exc_info"])


def test_configuring_twice_does_not_duplicate_lines() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging("INFO", service="rules", stream=first)
    handler = configure_logging("INFO", service="rules", stream=second)
    try:
        logging.getLogger("cardtable.rules").info("once")
    finally:
        remove_logging(handler)

    assert first.getvalue() == ""
    assert len(second.getvalue().splitlines()) == 1
