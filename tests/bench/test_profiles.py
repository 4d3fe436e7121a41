"""``cardtable bench --profile``: a process sampled from outside, its samples summed by
function. The sampler is the real py-spy, on a process of the test's own."""

from __future__ import annotations

import asyncio
import doctest
import subprocess
import sys
from pathlib import Path

from cardtable_tools.bench import cpu_kinds, profiles
from cardtable_tools.bench.profiles import Profiler, summarise

BUSY = """
def spin_the_wheel():
    total = 0
    for number in range(10**6):
        total += number
    return total

def idle_a_little():
    return sum(range(10))

while True:
    spin_the_wheel()
    idle_a_little()
"""


def test_docstring_examples_pass() -> None:
    results = doctest.testmod(profiles)
    assert results.attempted > 0 and results.failed == 0


def test_lines_of_one_function_count_once_and_paths_are_shortened() -> None:
    samples, shares = summarise(
        [
            "<module> (/srv/x/lib/python3.11/site-packages/cardtable/engine/game.py:6);"
            "apply (/srv/x/site-packages/cardtable/engine/game.py:40) 7",
            "<module> (/srv/x/site-packages/cardtable/engine/game.py:6);"
            "apply (/srv/x/site-packages/cardtable/engine/game.py:41) 3",
            "not a profile line",
        ]
    )
    assert samples == 10
    assert [(share.function, share.own, share.total) for share in shares] == [
        ("apply (engine/game.py)", 1.0, 1.0)
    ]


def test_a_busy_process_is_sampled_and_its_hot_function_named(tmp_path: Path) -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        profiler = Profiler(tmp_path / "profiles", {"busy": busy.pid})

        async def sample() -> dict[str, dict[str, object]]:
            await profiler.start("load", 2)
            return await profiler.finish()

        summaries = asyncio.run(sample())
    finally:
        busy.kill()
        busy.wait()
    summary = summaries["load-busy"]
    assert "error" not in summary, summary
    assert summary["samples"] > 100  # 200 a second for 2 s, less whatever the machine lost
    top = summary["top"]
    assert isinstance(top, list)
    assert top[0][0].startswith("spin_the_wheel") and top[0][1] > 0.8
    assert Path(str(summary["file"])).read_text().count("spin_the_wheel") >= 1


def test_samples_are_put_under_the_kind_of_their_innermost_frame() -> None:
    assert cpu_kinds.kind_of("Runner.run (asyncio/runners.py:118)") == (
        "event loop and gRPC core (native)"
    )
    assert cpu_kinds.kind_of("wait_for (asyncio/tasks.py:479)") == "asyncio (Python)"
    assert cpu_kinds.kind_of("Client._send_publish (nats/aio/client.py:1)") == "NATS client"
    assert cpu_kinds.kind_of("crypto_sign_open (nacl/bindings/crypto_sign.py:9)") == (
        "signatures and sealing"
    )
    assert cpu_kinds.kind_of("apply (cardtable/engine/game.py:4)") == "engine"
    assert cpu_kinds.kind_of("encode_view (cardtable/views/encode.py:3)") == "views and facts"
    assert cpu_kinds.kind_of("execute (cardtable/table_service/application.py:4)") == (
        "our service code"
    )
    assert cpu_kinds.kind_of("dumps (json/__init__.py:2)") == cpu_kinds.OTHER
    shares = cpu_kinds.kinds_of(
        [
            "main;execute (cardtable/table_service/application.py:4) 5",
            "main;execute;publish (nats/aio/client.py:1) 3",
            "main (asyncio/runners.py:118) 2",
            "not a profile line",
        ]
    )
    assert shares == {
        "our service code": 0.5,
        "NATS client": 0.3,
        "event loop and gRPC core (native)": 0.2,
    }
    assert doctest.testmod(cpu_kinds).failed == 0
