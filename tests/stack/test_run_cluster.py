"""``cardtable run --nats-cluster 3``: three clustered servers, the log R3, every URL given out."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest

from cardtable.platform.log_names import DEFAULT_PREFIX, LogNames
from cardtable.platform.nats import connect_nats
from cardtable.platform.nats_access import OPERATOR
from cardtable.platform.settings import credentials_from
from cardtable_tools.stack.run import run_stack

pytestmark = pytest.mark.timeout(180)


@pytest.mark.services
async def test_run_with_a_three_server_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("NATS_URL", "DATABASE_URL"):  # the run must start its own servers
        monkeypatch.delenv(variable, raising=False)
    printed: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_stack(
            tmp_path / "logs",
            lambda message: printed.append(str(message)),
            stop,
            demo=False,
            live=False,
            handle_signals=False,
            nats_cluster=3,
        )
    )
    try:
        while not any("serving until Ctrl-C" in line for line in printed):
            if task.done():
                task.result()
                raise AssertionError(f"the stack stopped before serving: {printed}")
            await asyncio.sleep(0.5)
        exports = [
            shlex.split(line)[1].partition("=")
            for line in (tmp_path / "env").read_text().splitlines()
            if line.startswith("export ")
        ]
        env = {name: value for name, _, value in exports}
        urls = env["NATS_URL"].split(",")
        assert len(urls) == 3
        assert len(list((tmp_path / "logs").glob("*.log"))) >= 4
        credentials = credentials_from(env)
        names = LogNames.from_prefix(DEFAULT_PREFIX)
        async with await connect_nats(
            env["NATS_URL"], name="pytest", credentials=credentials,
            inbox_prefix=names.inbox_prefix(OPERATOR),
        ) as connection:  # fmt: skip
            info = await connection.jetstream.stream_info(names.stream)
        assert info.config.num_replicas == 3
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 60) == 0
