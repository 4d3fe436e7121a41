"""The released contract holds: make proto-check refuses a breaking change and lets additions in.

Each scenario copies proto/ (with its committed baseline), edits the copy the way an engineer
might, and runs the very check ``make proto-check`` runs (``scripts/proto_baseline.py check``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "proto_baseline.py"
EVENTS = Path("cardtable/events/v1/events.proto")
ADVICE = "add a new field (a new number) or a new\nmessage"


def run_check(proto_root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "check", "--proto-root", str(proto_root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def replace_once(path: Path, old: str, new: str) -> None:
    """Edit ``path``; the text to replace must be there exactly once, so no scenario passes
    because the protos moved on and its edit no longer applies."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path.name} exactly once"
    path.write_text(text.replace(old, new))


@pytest.fixture
def protos(tmp_path: Path) -> Path:
    """A copy of proto/, baseline included."""
    copy = tmp_path / "proto"
    shutil.copytree(REPO / "proto", copy)
    return copy


def test_the_protos_are_compatible_with_the_released_baseline() -> None:
    result = run_check(REPO / "proto")

    assert result.returncode == 0, result.stderr


def change_a_field_type(root: Path) -> None:
    replace_once(root / EVENTS, "  uint64 table_version = 6;", "  uint32 table_version = 6;")


def delete_a_field(root: Path) -> None:
    replace_once(root / EVENTS, "  bool by_timeout = 4;\n", "")


def renumber_a_field(root: Path) -> None:
    replace_once(root / EVENTS, "  string new_table_id = 1;", "  string new_table_id = 2;")


def rename_a_json_name(root: Path) -> None:
    replace_once(
        root / EVENTS,
        "  string command_id = 3;",
        '  string command_id = 3 [json_name = "commandKey"];',
    )


def rename_a_field(root: Path) -> None:
    replace_once(root / EVENTS, "  string actor_id = 3;", "  string actor = 3;")


def move_a_field_into_a_oneof(root: Path) -> None:
    replace_once(
        root / EVENTS,
        "  cardtable.rules.v1.Fact fact = 1;",
        "  oneof old_form {\n    cardtable.rules.v1.Fact fact = 1;\n  }",
    )


def move_a_message_to_another_file(root: Path) -> None:
    """Same package, same bytes on the wire, but Python imports it from another module."""
    replace_once(root / EVENTS, "message RematchCreated {\n  string new_table_id = 1;\n}\n", "")
    replace_once(
        root / EVENTS,
        'import "google/protobuf/timestamp.proto";',
        'import "google/protobuf/timestamp.proto";\nimport "cardtable/events/v1/rematch.proto";',
    )
    (root / "cardtable/events/v1/rematch.proto").write_text(
        'syntax = "proto3";\n\npackage cardtable.events.v1;\n\n'
        "message RematchCreated {\n  string new_table_id = 1;\n}\n"
    )


#: Each breaking edit, with what buf says about it.
BREAKING: list[tuple[Callable[[Path], None], str]] = [
    (
        change_a_field_type,
        'Field "6" with name "table_version" on message "EventBatch" changed type from '
        '"uint64" to "uint32"',
    ),
    (
        delete_a_field,
        'Previously present field "4" with name "by_timeout" on message "ActionTaken" was deleted',
    ),
    (
        renumber_a_field,
        'Previously present field "1" with name "new_table_id" on message "RematchCreated" '
        "was deleted",
    ),
    (
        rename_a_json_name,
        'Field "3" with name "command_id" on message "EventBatch" changed option "json_name" '
        'from "commandId" to "commandKey"',
    ),
    (
        rename_a_field,
        'Field "3" on message "ActionTaken" changed name from "actor_id" to "actor"',
    ),
    (
        move_a_field_into_a_oneof,
        'Field "1" with name "fact" on message "FactRecorded" moved from outside to inside a oneof',
    ),
    (
        move_a_message_to_another_file,
        'Previously present message "RematchCreated" was deleted from file',
    ),
]


@pytest.mark.parametrize(
    ("edit", "named"), [pytest.param(edit, named, id=edit.__name__) for edit, named in BREAKING]
)
def test_a_breaking_change_fails_the_check_naming_it(
    protos: Path, edit: Callable[[Path], None], named: str
) -> None:
    edit(protos)

    result = run_check(protos)

    assert result.returncode == 1
    assert named in result.stderr
    assert ADVICE in result.stderr


def test_additions_pass_the_check(protos: Path) -> None:
    """What engineers add between releases: a new file of messages, new messages, new fields on
    released messages, a oneof of new typed messages beside a released field, an enum value."""
    (protos / "cardtable/events/v1/additions_check.proto").write_text(
        'syntax = "proto3";\n\npackage cardtable.events.v1;\n\n'
        "message AdditionsCheckFact {\n  uint32 seat = 1;\n  repeated string cards = 2;\n}\n"
    )
    events = protos / EVENTS
    replace_once(
        events,
        'import "google/protobuf/timestamp.proto";',
        'import "google/protobuf/timestamp.proto";\n'
        'import "cardtable/events/v1/additions_check.proto";',
    )
    events.write_text(
        events.read_text()
        + "\nmessage AdditionsCheckView {\n  string phase = 1;\n  optional uint32 dealer = 2;\n}\n"
    )
    replace_once(
        events,
        "  bytes command_fingerprint = 8;\n",
        "  bytes command_fingerprint = 8;\n  string additions_check_note = 900;\n",
    )
    replace_once(
        events,
        "  cardtable.rules.v1.Fact fact = 1;\n",
        "  cardtable.rules.v1.Fact fact = 1;\n"
        "  oneof additions_check_typed {\n"
        "    AdditionsCheckFact additions_check_fact = 900;\n"
        "    AdditionsCheckView additions_check_view = 901;\n"
        "  }\n",
    )
    replace_once(
        events, "  PLAYER_KIND_BOT = 2;\n", "  PLAYER_KIND_BOT = 2;\n  PLAYER_KIND_GUEST = 900;\n"
    )

    result = run_check(protos)

    assert result.returncode == 0, result.stderr
