"""Game options: a frozen dataclass per game, read from text key/value pairs.

Options reach the engine as strings (``--option must_trump=true`` on the command line, a
``map<string, string>`` on the wire), so each game declares a dataclass and this module turns
text into its typed fields, rejecting unknown keys and unreadable values by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from cardtable.engine.errors import InvalidInput

OptionsT = TypeVar("OptionsT")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _convert(name: str, value: Any, kind: type) -> Any:
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    text = str(value).strip().lower()
    if kind is bool:
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise InvalidInput(f"option {name} takes true or false, not {value!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise InvalidInput(f"option {name} takes a whole number, not {value!r}") from None
    return str(value)


def read_options(options_type: type[OptionsT], values: Mapping[str, Any] | None) -> OptionsT:
    """An instance of ``options_type`` from text values; defaults fill what is not given."""
    if values is None:
        return options_type()
    fields = {field.name: field for field in dataclasses.fields(options_type)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(fields))
    if unknown:
        known = ", ".join(sorted(fields)) or "none"
        raise InvalidInput(f"unknown option {', '.join(unknown)} (this game's options: {known})")
    kinds = {name: type(field.default) for name, field in fields.items()}
    converted = {name: _convert(name, value, kinds[name]) for name, value in values.items()}
    return options_type(**converted)


def options_to_dict(options: Any) -> dict[str, Any]:
    """The options as a plain dict (bools and ints stay typed), for records and snapshots."""
    return dataclasses.asdict(options)


def describe_options(options_type: type) -> list[dict[str, Any]]:
    """Each option's name, default and help text (the field's ``help`` metadata)."""
    return [
        {"name": field.name, "default": field.default, "help": field.metadata.get("help", "")}
        for field in dataclasses.fields(options_type)
    ]
