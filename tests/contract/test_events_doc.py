"""docs/events.md lists every event and every typed fact, each with an example that parses.

The protos are read through the generated descriptors: every member of ``Event.body`` and of
the oneof of typed facts in ``FactRecorded`` needs one row of the form

    | `MessageName` | one-line meaning | `{...protobuf JSON on one line...}` |

whose example ``json_format.Parse`` accepts into that message (unknown fields are refused, so
an example cannot drift from the fields), and no such row may name a message that is not one
of those members.

Each value of the enums that replaced a reason or phase text needs one row of the form

    | `Message.Enum` | `VALUE` | `"text"` | meaning |

with the text the code writes beside that value (platform/event_upcasting.py, views/names.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
    text_format,
)
from google.protobuf.descriptor import Descriptor, OneofDescriptor

from cardtable.platform.event_upcasting import END_TEXTS, HANDOVER_TEXTS, REQUEST_TEXTS
from cardtable.views.names import STATUS_PHASES, inverse
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
#: A row whose last cell is a JSON object in backticks is an example row.
EXAMPLE_ROW = re.compile(r"^\|.*\| `\{.*\}` \|$")
ROW = re.compile(
    r"^\| `(?P<name>[A-Z]\w*)` \| (?P<meaning>[^|\s][^|]*?) \| `(?P<example>\{.*\})` \|$"
)


#: A row of an enum value: the enum, the value's name, its text in backticks, a meaning.
ENUM_ROW = re.compile(
    r"^\| `(?P<enum>[A-Z]\w*\.[A-Z]\w*)` \| `(?P<value>[A-Z][A-Z0-9_]*)` \| "
    r"`\"(?P<text>[^\"`]*)\"` \| (?P<meaning>[^|\s][^|]*?) \|$"
)
#: The enums documented value by value, and the text the code writes beside each value.
ENUM_TEXTS: dict[str, dict[int, str]] = {
    "SeatHandedToBot.Reason": dict(HANDOVER_TEXTS),
    "BotSeatRequested.Reason": dict(REQUEST_TEXTS),
    "GameFinished.Reason": dict(END_TEXTS),
    "GameStatus.Phase": dict(inverse(STATUS_PHASES)),
}
ENUMS = {
    "SeatHandedToBot.Reason": events_pb2.SeatHandedToBot.Reason.DESCRIPTOR,
    "BotSeatRequested.Reason": events_pb2.BotSeatRequested.Reason.DESCRIPTOR,
    "GameFinished.Reason": events_pb2.GameFinished.Reason.DESCRIPTOR,
    "GameStatus.Phase": common_pb2.GameStatus.Phase.DESCRIPTOR,
}


class Row(NamedTuple):
    line: int
    name: str
    meaning: str
    example: str


def real_oneofs(message: Descriptor) -> list[OneofDescriptor]:
    """The message's oneofs, without those protoc makes for each proto3 ``optional`` field."""
    proto = descriptor_pb2.DescriptorProto()
    message.CopyToProto(proto)
    optional = {field.name for field in proto.field if field.proto3_optional}
    return [
        oneof
        for oneof in message.oneofs
        if not (len(oneof.fields) == 1 and oneof.fields[0].name in optional)
    ]


def members(oneofs: list[OneofDescriptor]) -> dict[str, Descriptor]:
    """Message name -> message type of every member of ``oneofs``."""
    found: dict[str, Descriptor] = {}
    for oneof in oneofs:
        for field in oneof.fields:
            assert field.message_type is not None, (
                f"{oneof.full_name}.{field.name} is not a message: each event and typed fact is one"
            )
            found[field.message_type.name] = field.message_type
    return found


EVENTS = members([events_pb2.Event.DESCRIPTOR.oneofs_by_name["body"]])
#: Empty until FactRecorded has a oneof of typed facts; checked as soon as it has one.
FACTS = members(real_oneofs(events_pb2.FactRecorded.DESCRIPTOR))

#: A FactRecorded as it will be: the released field, a proto3 optional one, typed facts.
FACTS_TO_COME = """
name: "facts_to_come.proto" package: "check" syntax: "proto3"
message_type { name: "TrickWon" field { name: "seat" number: 1 type: TYPE_UINT32 } }
message_type {
  name: "FactRecorded"
  field { name: "fact" number: 1 type: TYPE_STRING }
  field { name: "note" number: 2 type: TYPE_STRING oneof_index: 1 proto3_optional: true }
  field {
    name: "trick_won" number: 3 type: TYPE_MESSAGE type_name: ".check.TrickWon" oneof_index: 0
  }
  oneof_decl { name: "typed" }
  oneof_decl { name: "_note" }
}
"""


def read_rows() -> tuple[dict[str, list[Row]], list[str]]:
    """The example rows by message name, and the lines that look like one but are malformed."""
    rows: dict[str, list[Row]] = {}
    malformed = []
    for number, line in enumerate(DOC.read_text().splitlines(), start=1):
        if not EXAMPLE_ROW.match(line):
            continue
        match = ROW.match(line)
        if match is None:
            malformed.append(f"line {number}: {line[:80]}")
            continue
        row = Row(number, match["name"], match["meaning"], match["example"])
        rows.setdefault(row.name, []).append(row)
    return rows, malformed


def problems_with(documented: dict[str, Descriptor]) -> list[str]:
    """What is wrong with the rows of the messages in ``documented``."""
    rows, _ = read_rows()
    problems = []
    for name, message_type in sorted(documented.items()):
        found = rows.get(name, [])
        if len(found) != 1:
            problems.append(f"{name}: {len(found)} rows in docs/events.md, needs exactly 1")
            continue
        row = found[0]
        message = message_factory.GetMessageClass(message_type)()
        try:
            json_format.Parse(row.example, message)
        except json_format.ParseError as error:
            problems.append(f"{name} (line {row.line}): the example does not parse: {error}")
            continue
        if message_type.fields and not message.ListFields():
            problems.append(f"{name} (line {row.line}): the example sets no field")
    return problems


def test_every_event_has_a_row_whose_example_parses() -> None:
    problems = problems_with(EVENTS)

    assert not problems, "\n".join(problems)


def test_every_typed_fact_has_a_row_whose_example_parses() -> None:
    if not FACTS:
        pytest.skip("FactRecorded has no oneof of typed facts yet: no fact rows to check")

    problems = problems_with(FACTS)

    assert not problems, "\n".join(problems)


def test_a_oneof_of_typed_facts_is_found_and_optional_fields_are_not_taken_for_one() -> None:
    """The fact check starts by itself once FactRecorded has a oneof: shown on a message built
    like the one to come (a released field, an optional field, and a oneof of typed facts)."""
    file = text_format.Parse(FACTS_TO_COME, descriptor_pb2.FileDescriptorProto())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)

    found = members(real_oneofs(pool.FindMessageTypeByName("check.FactRecorded")))

    assert list(found) == ["TrickWon"]
    assert real_oneofs(events_pb2.TableCreated.DESCRIPTOR) == []  # only `optional bool rated`


def test_no_row_names_a_message_that_is_not_an_event_or_a_fact() -> None:
    rows, _ = read_rows()

    unknown = sorted(set(rows) - set(EVENTS) - set(FACTS))

    assert not unknown, f"docs/events.md has rows for messages that do not exist: {unknown}"


def test_every_example_row_is_well_formed() -> None:
    _, malformed = read_rows()

    assert not malformed, "rows must read | `Name` | meaning | `{json}` |:\n" + "\n".join(malformed)


def enum_rows() -> dict[str, dict[str, list[str]]]:
    """The texts documented for each value, by enum and value name."""
    rows: dict[str, dict[str, list[str]]] = {}
    for line in DOC.read_text().splitlines():
        match = ENUM_ROW.match(line)
        if match is not None:
            values = rows.setdefault(match["enum"], {})
            values.setdefault(match["value"], []).append(match["text"])
    return rows


@pytest.mark.parametrize("enum", list(ENUMS))
def test_every_value_of_a_reason_or_phase_enum_has_a_row_with_its_text(enum: str) -> None:
    descriptor = ENUMS[enum]
    documented = enum_rows().get(enum, {})
    expected = {
        value.name: [ENUM_TEXTS[enum].get(value.number, "(no text in the code)")]
        for value in descriptor.values
        if value.number
    }

    assert documented == expected


def test_no_enum_row_names_an_enum_that_is_not_checked() -> None:
    unknown = sorted(set(enum_rows()) - set(ENUMS))

    assert not unknown, f"docs/events.md has rows for enums no test checks: {unknown}"
