"""Where each service's CPU goes under a load: py-spy samples every service process while the
bench measures, and the samples are summed by function.

py-spy reads a process's stacks from outside (ptrace), so the services run unchanged and
unslowed by instrumentation; ``--nonblocking`` keeps it from pausing them at all. Each
profile is written as collapsed stacks (``DIR/<load>-<service>.txt``, one line per distinct
stack with its sample count), the input every flame-graph tool reads, and summarised here as
the functions holding the most samples, by their own code and with what they call, and by
kind of work (``cpu_kinds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cardtable_tools.bench.cpu_kinds import kinds_of

#: Samples a second: enough for a stable picture in 20 s, cheap for py-spy.
SAMPLE_RATE = 200


def py_spy() -> str:
    """The py-spy binary beside this interpreter (cardtable-tools depends on it), or on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if not found:
        raise RuntimeError("py-spy not found: pip install -e tools (cardtable-tools brings it)")
    return found


@dataclass(frozen=True)
class FunctionShare:
    """One function's part of a profile's samples."""

    function: str
    own: float
    total: float


def summarise(collapsed: Iterable[str], top: int = 12) -> tuple[int, list[FunctionShare]]:
    """The sample count, and the ``top`` functions by their own share, from collapsed stacks.

    >>> count, shares = summarise(["main;serve;apply 30", "main;serve;encode 10", "main 60"])
    >>> count, [(s.function, s.own, s.total) for s in shares[:2]]
    (100, [('main', 0.6, 1.0), ('apply', 0.3, 0.3)])
    """
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed:
        stack, _, count_text = line.rstrip().rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        samples += count
        frames = [_function(frame) for frame in stack.split(";")]
        own[frames[-1]] += count
        for function in set(frames):
            total[function] += count
    if not samples:
        return 0, []
    ranked = [
        FunctionShare(name, round(own[name] / samples, 3), round(total[name] / samples, 3))
        for name, _ in own.most_common(top)
    ]
    return samples, ranked


def _function(frame: str) -> str:
    """``apply (cardtable/engine/game.py:12)`` as ``apply (engine/game.py)``: one entry per
    function, whatever line of it was running."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("/cardtable/", "/cardtable_tools/", "/site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path})" if path else name


class Profiler:
    """Profiles of named processes, each for one measured stretch of a load."""

    def __init__(self, folder: Path, pids: Mapping[str, int]) -> None:
        self.folder = folder
        self.pids = dict(pids)
        self._running: list[tuple[str, asyncio.subprocess.Process]] = []

    async def start(self, label: str, seconds: float) -> None:
        """Sample every process for ``seconds`` into ``<label>-<name>.txt``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        binary = py_spy()
        for name, pid in self.pids.items():
            target = self.folder / f"{label}-{name}.txt"
            process = await asyncio.create_subprocess_exec(
                binary, "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))),
                "--rate", str(SAMPLE_RATE), "--nonblocking", "--format", "raw",
                "--output", str(target),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            self._running.append((str(target), process))

    async def finish(self) -> dict[str, dict[str, object]]:
        """Wait for the samplers; each profile's file, sample count and top functions."""
        summaries: dict[str, dict[str, object]] = {}
        for target, process in self._running:
            _, errors = await process.communicate()
            name = Path(target).stem
            summaries[name] = await asyncio.to_thread(
                _profile_summary, Path(target), process.returncode, errors
            )
        self._running.clear()
        return summaries

    async def stop(self) -> None:
        """Stop samplers still running (the load failed)."""
        for _, process in self._running:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        self._running.clear()


def _profile_summary(path: Path, returncode: int | None, errors: bytes) -> dict[str, object]:
    """A finished sampler's profile, summarised, or what went wrong."""
    if returncode != 0 or not path.exists():
        return {"error": errors.decode(errors="replace").strip()[-300:]}
    lines = path.read_text().splitlines()
    samples, shares = summarise(lines)
    return {
        "file": str(path),
        "samples": samples,
        "top": [[share.function, share.own, share.total] for share in shares],
        "kinds": kinds_of(lines) if samples else {},
    }
