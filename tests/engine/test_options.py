"""Game options: read from text, and written back as the plain dict records and snapshots hold."""

from __future__ import annotations

import dataclasses

import pytest

from cardtable.engine.errors import InvalidInput
from cardtable.engine.options import options_to_dict, read_options
from cardtable.engine.registry import GAMES

OPTION_TYPES = [spec.options_type for spec in GAMES.values()]


def flipped(options_type: type) -> dict[str, str]:
    """Every option of ``options_type`` away from its default, as the text a client sends."""
    values = {}
    for field in dataclasses.fields(options_type):
        default = field.default
        if isinstance(default, bool):
            values[field.name] = "false" if default else "true"
        elif isinstance(default, int):
            values[field.name] = str(default + 7)
        else:
            values[field.name] = f"{default}-other"
    return values


@pytest.mark.parametrize("options_type", OPTION_TYPES, ids=lambda kind: kind.__name__)
def test_the_dict_holds_every_option_typed_as_a_deep_copy_would(options_type: type) -> None:
    for options in (options_type(), read_options(options_type, flipped(options_type))):
        written = options_to_dict(options)
        assert written == dataclasses.asdict(options)
        assert [type(value) for value in written.values()] == [
            type(value) for value in dataclasses.asdict(options).values()
        ]


@pytest.mark.parametrize("options_type", OPTION_TYPES, ids=lambda kind: kind.__name__)
def test_each_dict_is_the_callers_own(options_type: type) -> None:
    options = options_type()
    options_to_dict(options).clear()
    assert options_to_dict(options) == dataclasses.asdict(options)


def test_unknown_and_unreadable_options_are_refused_by_name() -> None:
    hearts = GAMES["hearts"].options_type
    with pytest.raises(InvalidInput, match="unknown option colour"):
        read_options(hearts, {"colour": "red"})
    with pytest.raises(InvalidInput, match="option quick takes true or false"):
        read_options(hearts, {"quick": "perhaps"})
    assert read_options(hearts, {"quick": " Yes "}).quick is True
