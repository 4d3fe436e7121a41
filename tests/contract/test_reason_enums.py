"""Reasons and phases are enums, and their texts are written from them in one place.

``SeatHandedToBot``, ``BotSeatRequested`` and ``GameFinished`` each hold their reason as an enum
beside the deprecated text, and ``GameStatus`` its phase. Checked here: every enum value has its
text and every text its value (platform/event_upcasting.py, views/names.py), every phase the
engine uses has an enum, and every writer of one of those events sets the enum and takes the
text from it, so that no reason can be written as text alone.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf.descriptor import EnumDescriptor

import cardtable.engine
from cardtable.platform.event_upcasting import END_TEXTS, HANDOVER_TEXTS, REQUEST_TEXTS
from cardtable.views.names import PHASES, STATUS_PHASES
from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2

ROOT = Path(__file__).resolve().parents[2]
#: Not searched for writers: generated code, tests (which write old forms on purpose), and
#: what is not this project's code.
NOT_WRITERS = {".venv", ".git", "node_modules", "cardtable_api", "tests"}
#: Each event with a reason, the enum field beside its text, and the texts.
REASONS = {
    "SeatHandedToBot": ("handover_reason", HANDOVER_TEXTS),
    "BotSeatRequested": ("request_reason", REQUEST_TEXTS),
    "GameFinished": ("end_reason", END_TEXTS),
}


def _values(enum: EnumDescriptor) -> set[int]:
    """The enum's values, without the zero one that is never written."""
    return {value.number for value in enum.values if value.number}


@pytest.mark.parametrize("message", list(REASONS))
def test_every_reason_has_a_text_and_every_text_a_reason(message: str) -> None:
    field, texts = REASONS[message]
    enum = events_pb2.DESCRIPTOR.message_types_by_name[message].fields_by_name[field].enum_type
    assert enum is not None

    assert set(texts) == _values(enum)
    assert len(set(texts.values())) == len(texts), "two reasons written as the same text"


def test_the_status_phase_repeats_the_view_phase_name_for_name_and_number_for_number() -> None:
    status = common_pb2.GameStatus.Phase.DESCRIPTOR
    view = views_pb2.Phase.DESCRIPTOR

    assert [(value.name, value.number) for value in status.values] == [
        (value.name, value.number) for value in view.values
    ]
    assert set(PHASES.values()) == _values(view)
    assert set(STATUS_PHASES.values()) == _values(status)


def _engine_phases() -> Iterator[tuple[str, str]]:
    """Every phase name the engine's modules declare (``PLAY_PHASE = "play"``)."""
    for module_info in pkgutil.walk_packages(cardtable.engine.__path__, "cardtable.engine."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if name.endswith("_PHASE") and isinstance(value, str):
                yield f"{module_info.name}.{name}", value


def test_every_phase_of_the_engine_has_an_enum() -> None:
    phases = dict(_engine_phases())

    assert {"deal", "over", "play"} <= set(phases.values())
    missing = {name: phase for name, phase in phases.items() if phase not in STATUS_PHASES}
    assert not missing, f"phases without a GameStatus.Phase / Phase value: {missing}"


class Writers(ast.NodeVisitor):
    """Every construction of an event with a reason, and whether ``with_text`` wraps it."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.Call, bool]] = []
        self._wrapped: set[int] = set()

    def visit_Call(self, node: ast.Call) -> None:
        name = _called(node)
        if name == "with_text" and node.args:
            self._wrapped.add(id(node.args[0]))
        elif name in REASONS:
            self.found.append((node, id(node) in self._wrapped))
        self.generic_visit(node)


def _called(node: ast.Call) -> str:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return ""


def _sources() -> Iterator[Path]:
    """The hand-written code of both distributions (not a build's copies of it)."""
    for root in (ROOT / "services" / "cardtable", ROOT / "tools" / "cardtable_tools"):
        yield from _python_files(root)


def _python_files(top: Path) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [name for name in subfolders if name not in NOT_WRITERS]
        yield from (Path(folder) / name for name in files if name.endswith(".py"))


def test_every_writer_sets_the_reason_enum_and_takes_its_text_from_it() -> None:
    """Writing ``reason="..."`` by hand, or a reason without its enum, fails here: the text is
    written from the enum by ``with_text`` alone, so every text written has its enum value."""
    problems, writers = [], 0
    for path in _sources():
        visitor = Writers()
        visitor.visit(ast.parse(path.read_text(), str(path)))
        for call, wrapped in visitor.found:
            writers += 1
            message = _called(call)
            keywords = {keyword.arg for keyword in call.keywords}
            where = f"{path.relative_to(ROOT)}:{call.lineno} {message}"
            if "reason" in keywords:
                problems.append(f"{where} writes the reason as text: set {REASONS[message][0]}")
            if REASONS[message][0] not in keywords:
                problems.append(f"{where} has no {REASONS[message][0]}")
            if not wrapped:
                problems.append(f"{where} is not written through with_text(...)")

    assert writers >= 5, "the table service's writers were not found"
    assert not problems, "\n".join(problems)


def test_the_check_of_writers_finds_a_text_written_by_hand() -> None:
    code = (
        "with_text(SeatHandedToBot(seat=1, handover_reason=LEFT))\n"
        'events_pb2.GameFinished(totals=[1], reason="gremlins")\n'
    )
    visitor = Writers()
    visitor.visit(ast.parse(code))

    assert [(_called(call), wrapped) for call, wrapped in visitor.found] == [
        ("SeatHandedToBot", True),
        ("GameFinished", False),
    ]
