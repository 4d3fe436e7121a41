"""A table's ``bot_strategy`` is a level or a strategy by its exact name; anything else is refused
with a sentence that lists them (INVALID_ARGUMENT over gRPC: test_abuse.py)."""

from __future__ import annotations

import pytest

from cardtable.bots.names import BOT_STRATEGY_NAMES
from cardtable.table_service.errors import BadRequestError
from cardtable.table_service.limits import check_settings
from cardtable_api.events.v1 import events_pb2


@pytest.mark.parametrize("name", ["easy", "normal", "hard", "random", "rules", "search"])
def test_every_level_and_strategy_is_accepted(name: str) -> None:
    assert name in BOT_STRATEGY_NAMES
    check_settings(events_pb2.TableSettings(bot_strategy=name))


@pytest.mark.parametrize("name", ["genius", "Hard", " easy", "", "expert"])
def test_any_other_name_is_refused_naming_them_all(name: str) -> None:
    with pytest.raises(BadRequestError) as refused:
        check_settings(events_pb2.TableSettings(bot_strategy=name))
    assert str(refused.value) == (
        f"bot_strategy is one of easy, normal, hard, random, rules, search, not {name!r}"
    )
