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
    """The options as a plain dict (bools and ints stay typed), for records and snapshots.

    Every option is a bool, an int or a text (:func:`read_options` makes nothing else), so
    reading the fields is the whole copy. ``dataclasses.asdict`` copies deeply, value by
    value, and the rules service made this dict twice for every move (the state's snapshot and
    the view of the seat to act), at several times the cost.
    """
    return {name: getattr(options, name) for name in _field_names(type(options))}


#: Each options type's field names, looked up once (the games' types are few and fixed).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(options_type: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(options_type)
    if names is None:
        fields = dataclasses.fields(options_type)
        names = _FIELD_NAMES[options_type] = tuple(field.name for field in fields)
    return names


def describe_options(options_type: type) -> list[dict[str, Any]]:
    """Each option's name, default and help text (the field's ``help`` metadata)."""
    return [
        {"name": field.name, "default": field.default, "help": field.metadata.get("help", "")}
        for field in dataclasses.fields(options_type)
    ]
