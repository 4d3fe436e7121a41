"""Hostile input against the rules and table services, over real gRPC.

``fuzz_stack(requests, seed)`` starts what it needs and returns a :class:`FuzzReport`;
``run_fuzz(...)`` does the same against services already running; ``render_fuzz_report``
shows a report. The harness needs nothing beyond the runtime dependencies.
"""

from cardtable_tools.hostile.fuzz import run_fuzz
from cardtable_tools.hostile.report import FuzzReport, render_fuzz_report
from cardtable_tools.hostile.stack import fuzz_stack

__all__ = ["FuzzReport", "fuzz_stack", "render_fuzz_report", "run_fuzz"]
