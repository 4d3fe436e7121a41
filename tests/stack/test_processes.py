"""Service processes as the benchmarks and tests start them: what a failed start says."""

from __future__ import annotations

import pytest

from cardtable_tools.stack.processes import spawn, start


async def test_a_service_that_fails_to_start_says_why_without_a_log_file() -> None:
    with pytest.raises(RuntimeError) as caught:
        await start("rules", {"GRPC_PORT": "not-a-port"})
    assert "exited with 2" in str(caught.value)
    assert "GRPC_PORT='not-a-port' is not a port number" in str(caught.value)


def test_standard_error_goes_to_a_file_not_to_a_pipe_nobody_reads() -> None:
    service = spawn("rules", {"GRPC_PORT": "not-a-port"})
    try:
        assert service.process.wait(30) == 2
        assert service.process.stderr is None  # no pipe that could fill up and stop it
        assert service.error_file is not None
        service.error_file.seek(0)
        assert b"not a port number" in service.error_file.read()
    finally:
        service.terminate()
