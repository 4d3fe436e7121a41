"""Quotas on and off in one benchmark: the table service's settings for each side, what its
metrics say the quota checks did during a load, and the two sides' CPU per move compared.

The bench's players move far faster than a person (``MACHINE_SPEED_PLAYERS``): on the "on"
side the per-player rate is that high, so no bench player is refused, but every check still
runs (the token bucket's arithmetic on each mutating call, the open tables counted at each
new table, the watch streams counted): the table service counts each check it makes in
``cardtable_table_quota_checks_total{check}``, which the report shows beside the refusals.
The "off" side is ``QUOTAS_ENABLED=false``: no check runs.

Each side runs on a stack of its own, both up for the whole run, and the loads go to them in
turn (:class:`SideBySide`): restarting one table service between the sides instead gives the
one measured second a service that first loads every table the first left running, and that
holds them from then on.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from cardtable.table_service.metrics import QUOTA_CHECKS
from cardtable_tools.bench.scrape import sample_sum, scrape_metrics
from cardtable_tools.bench.stack import SystemStack

#: The table service's settings on each side (beside ``MACHINE_SPEED_PLAYERS``, always set).
SIDES: dict[str, dict[str, str]] = {
    "on": {"QUOTAS_ENABLED": "true"},
    "off": {"QUOTAS_ENABLED": "false"},
}
CHECKS = "cardtable_table_quota_checks_total"
REFUSALS = "cardtable_table_quota_refusals_total"
#: The issue's bound: CPU per move with quotas on and off at most this share apart.
MAX_APART = 0.05


def parse_sides(text: str) -> tuple[str, ...]:
    """``"on,off"`` as ``("on", "off")``; each side once, and only sides there are."""
    sides = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [side for side in sides if side not in SIDES]
    if unknown or not sides or len(set(sides)) != len(sides):
        raise ValueError(f"quotas are 'on', 'off' or 'on,off', not {text!r}")
    return sides


def side_order(sides: Sequence[str], load_index: int) -> list[str]:
    """The sides in turn for the ``load_index``-th load: every other load the other way
    round, so that neither side is always the one measured later."""
    return list(sides) if load_index % 2 == 0 else list(reversed(sides))


async def quota_counts(metrics_port: int) -> dict[str, float]:
    """The table service's quota checks by check, and its refusals (all limits), now."""
    text = await scrape_metrics(metrics_port)
    counts = {check: sample_sum(text, CHECKS, check=check) for check in QUOTA_CHECKS}
    counts["refusals"] = sample_sum(text, REFUSALS)
    return counts


def counts_since(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """What one load did: ``{"checks": {check: n}, "refusals": n}``."""
    return {
        "checks": {check: int(after[check] - before[check]) for check in QUOTA_CHECKS},
        "refusals": int(after["refusals"] - before["refusals"]),
    }


def cpu_ms_per_move(run: dict[str, Any], process: str | None = None) -> float | None:
    """CPU ms per move of ``process``, or of every process measured (None without moves);
    from the CPU seconds, which are rounded less than each process's ms per move."""
    if not run["moves"]:
        return None
    used = run["cpu_seconds"]
    seconds = sum(used.values()) if process is None else used.get(process)
    return None if seconds is None else round(seconds * 1000 / run["moves"], 3)


def _ratio(on: float | None, off: float | None) -> float | None:
    return round(on / off, 3) if on and off else None


class SideBySide:
    """Each load measured on every side in turn, each side on a stack of its own; the
    comparisons so far.

    Each side's stack has played the same loads before each one is measured (the loads go in
    turn), so both sides' table services hold the same state: a service that had played more
    (tables left running by earlier loads, a longer log) would cost more per move.
    """

    def __init__(self, stacks: Mapping[str, SystemStack], say: Callable[[str], None]) -> None:
        self._stacks, self._say = dict(stacks), say
        self.sides = tuple(stacks)
        self.loads: list[dict[str, Any]] = []

    async def measure(
        self, load: Callable[[SystemStack], Awaitable[dict[str, Any]]], label: str
    ) -> dict[str, Any]:
        """``load`` on each side's stack (the order alternating from one load to the next);
        the first side's run."""
        order = side_order(self.sides, len(self.loads))
        runs = {}
        for side in order:
            self._say(f"{label}, quotas {side} ...")
            runs[side] = await load(self._stacks[side])
            runs[side]["quotas"] = side
        self.loads.append(compare_load(runs, order))
        return runs[self.sides[0]]

    def report(self) -> dict[str, Any]:
        """The sides, their settings, each load compared, and the ratio over all loads (the
        geometric mean of the loads' ratios)."""
        ratios = [load.get("cpu_ratio_on_to_off") for load in self.loads]
        known = [ratio for ratio in ratios if ratio]
        overall = round(math.prod(known) ** (1 / len(known)), 3) if known else None
        return {
            "sides": list(self.sides),
            "settings": {side: SIDES[side] for side in self.sides},
            "max_apart": MAX_APART,
            "loads": self.loads,
            "cpu_ratio_on_to_off_geometric_mean": overall,
        }


def compare_load(runs: dict[str, dict[str, Any]], order: Sequence[str]) -> dict[str, Any]:
    """One load measured on each side: CPU per move (all processes, and the table service
    alone), the ratio on ÷ off, and whether the checks ran on the "on" side without refusing
    anyone."""
    sides = {
        side: {
            "moves_per_s": run["moves_per_s"],
            "moves": run["moves"],
            "errors": run["errors"],
            "cpu_ms_per_move": cpu_ms_per_move(run),
            "table_cpu_ms_per_move": cpu_ms_per_move(run, "table"),
            "cpu_seconds": run["cpu_seconds"],
            "quota_checks": run["quota_checks"],
            "quota_refusals": run["quota_refusals"],
        }
        for side, run in runs.items()
    }
    some = next(iter(runs.values()))
    comparison: dict[str, Any] = {
        "tables": some["tables"],
        "target_moves_per_s": some.get("target_moves_per_s"),
        "order": list(order),
    }
    comparison.update(sides)
    if "on" in sides and "off" in sides:
        on, off = sides["on"], sides["off"]
        ratio = _ratio(on["cpu_ms_per_move"], off["cpu_ms_per_move"])
        comparison["cpu_ratio_on_to_off"] = ratio
        comparison["table_cpu_ratio_on_to_off"] = _ratio(
            on["table_cpu_ms_per_move"], off["table_cpu_ms_per_move"]
        )
        comparison["within_bound"] = ratio is not None and abs(ratio - 1) <= MAX_APART
    if "on" in sides:
        checks = sides["on"]["quota_checks"]
        comparison["checks_ran"] = (
            checks["mutation_rate"] > 0
            and checks["open_tables_per_player"] > 0
            and sides["on"]["quota_refusals"] == 0
        )
    return comparison
