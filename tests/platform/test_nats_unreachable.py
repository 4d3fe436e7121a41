"""An unreachable NATS_URL: one line that the client retries, then the real message.

A command-line tool pointed at a NATS that is not there printed ten bare ``nats error``
warnings (one per reconnect attempt) before saying what was wrong.
"""

from __future__ import annotations

import logging

import pytest

from cardtable.platform.nats import connect_nats
from cardtable_tools.servers.server_process import free_port


async def test_retries_before_the_first_connection_are_not_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    with caplog.at_level(logging.DEBUG), pytest.raises(TimeoutError) as unreachable:
        await connect_nats(url, name="test-unreachable", connect_timeout_seconds=3)
    assert f"NATS at {url} still unreachable after 3s" in str(unreachable.value)
    ours = [record for record in caplog.records if record.name == "cardtable.platform.nats"]
    assert [record.getMessage() for record in ours] == ["nats not reachable yet, retrying"]
    assert ours[0].levelno == logging.INFO
