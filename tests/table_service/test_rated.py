"""Rated or unrated: the decision a new table records, and how every reader takes it back.

The games played to the end through the table and scoring services are in
tests/scoring_service/test_rated_through_table_service.py; these are the parts on their own.
"""

from __future__ import annotations

import doctest
import json
import time

import pytest

from cardtable.platform.rated_tables import table_is_rated
from cardtable.platform.settings import SettingsError, load
from cardtable.platform.tokens import PERSON, Principal
from cardtable.table_service import rated as rated_bounds
from cardtable.table_service.application import summary_of
from cardtable.table_service.commands import Decider, Environment
from cardtable.table_service.limits import TableLimits
from cardtable.table_service.lobby_index import TableSummary
from cardtable.table_service.main import TableServiceSettings
from cardtable.table_service.matchmaking import settings_with_defaults
from cardtable.table_service.rated import RATED_MIN_TURN_TIMER_MS, is_rated
from cardtable.table_service.servicer import _summary_message
from cardtable.table_service.state import TableState, apply_batch
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2
from tests.table_service.local_rules import LocalRules
from tests.table_service.test_settings import REQUIRED

HEARTS = rules_pb2.GameInfo(
    name="hearts", options=[rules_pb2.OptionInfo(name="quick", default_value="false")]
)


def test_docstring_examples_pass() -> None:
    results = doctest.testmod(rated_bounds)
    assert results.attempted > 0 and results.failed == 0


def timer(milliseconds: int) -> events_pb2.TableSettings:
    """The settings CreateTable resolves from a request that only sets the timer."""
    return settings_with_defaults(events_pb2.TableSettings(turn_timer_ms=milliseconds))


@pytest.mark.parametrize(
    ("milliseconds", "rated"),
    [(0, False), (5_000, False), (RATED_MIN_TURN_TIMER_MS - 1, False), (15_000, True),
     (600_000, True)],
)  # fmt: skip
def test_a_rated_game_has_a_timer_long_enough_for_a_person(milliseconds: int, rated: bool) -> None:
    assert is_rated(timer(milliseconds), {}, HEARTS) is rated


def test_a_deployment_sets_its_own_shortest_rated_timer() -> None:
    assert is_rated(timer(5_000), {}, HEARTS, min_turn_timer_ms=5_000)
    assert not is_rated(timer(20_000), {}, HEARTS, min_turn_timer_ms=30_000)
    assert not is_rated(timer(0), {}, HEARTS, min_turn_timer_ms=1)  # no timer: never rated


@pytest.mark.parametrize(
    ("options", "rated"),
    [({}, True), ({"quick": "false"}, True), ({"quick": "true"}, False),
     ({"quick": "0"}, False), ({"variant": "false"}, False)],
)  # fmt: skip
def test_a_rated_game_has_the_standard_options(options: dict[str, str], rated: bool) -> None:
    """Absent or the default the rules service lists, as text: another spelling is a change."""
    assert is_rated(timer(30_000), options, HEARTS) is rated


@pytest.mark.parametrize(
    ("strategy", "fill", "rated"),
    [("rules", True, True), ("easy", True, True), ("hard", True, True), ("search", True, True),
     ("random", True, False), ("random", False, False)],
)  # fmt: skip
def test_a_rated_game_has_no_computer_player_moving_at_random(
    strategy: str, fill: bool, rated: bool
) -> None:
    """Beating random players measures nothing: a rated table of them would farm points. A
    table that is not filled still hands leavers' seats to its computer players."""
    settings = timer(30_000)
    settings.bot_strategy, settings.fill_with_bots = strategy, fill
    assert is_rated(settings, {}, HEARTS) is rated


async def test_a_new_table_records_the_decision_from_what_the_rules_service_lists() -> None:
    decider = Decider(LocalRules(), Environment(now=time.time), TableLimits())
    ann = Principal("ann", PERSON)

    async def created(game: str, options: dict[str, str], turn_timer_ms: int) -> bool:
        request = events_pb2.TableCreated(
            game=game, options=common_pb2.GameOptions(values=options), settings=timer(turn_timer_ms)
        )
        event = (await decider.create_table(ann, request)).events[0].table_created
        assert event.HasField("rated")  # written by every table service from now on
        return event.rated

    assert await created("hearts", {}, 30_000)
    assert await created("whist", {"must_trump": "false"}, 15_000)
    assert not await created("hearts", {"quick": "true"}, 30_000)
    assert not await created("358", {"trump_beat": "true"}, 30_000)
    assert not await created("belote", {}, 5_000)
    assert not await created("belote", {}, 0)
    request = events_pb2.TableCreated(game="whist", settings=timer(30_000))
    request.settings.bot_strategy = "random"
    assert not (await decider.create_table(ann, request)).events[0].table_created.rated


def _folded(created: events_pb2.TableCreated) -> TableState:
    state = TableState(table_id="t")
    batch = events_pb2.EventBatch(table_version=1, events=[events_pb2.Event(table_created=created)])
    return apply_batch(state, batch, 1)


def test_a_log_from_before_the_decision_reads_as_rated_everywhere() -> None:
    older = events_pb2.TableCreated(game="hearts", seats=4, settings=timer(0))
    assert table_is_rated(older)
    state = _folded(older)
    assert state.rated and summary_of(state).rated
    recorded = events_pb2.TableCreated(game="hearts", seats=4, settings=timer(60_000), rated=False)
    assert not table_is_rated(recorded) and not _folded(recorded).rated


def test_the_lobby_shows_it_and_reads_entries_written_before_it_as_their_logs_do() -> None:
    older = json.dumps(
        {"table_id": "t1", "game": "hearts", "seats": 4, "seats_taken": 1, "status": "open"}
    ).encode()
    summary = TableSummary.from_json(older)
    assert summary.rated and _summary_message(summary).rated
    unrated = TableSummary("t2", "belote", 4, 4, "running", bot_seats=0, rated=False)
    assert TableSummary.from_json(unrated.to_json()) == unrated
    assert not _summary_message(unrated).rated


def test_the_shortest_rated_timer_is_a_setting() -> None:
    assert load(REQUIRED, TableServiceSettings.read).limits.rated_min_turn_timer_ms == 15_000
    env = {**REQUIRED, "RATED_MIN_TURN_TIMER_MS": "45000"}
    assert load(env, TableServiceSettings.read).limits.rated_min_turn_timer_ms == 45_000
    with pytest.raises(SettingsError, match="RATED_MIN_TURN_TIMER_MS=0 is outside"):
        load({**REQUIRED, "RATED_MIN_TURN_TIMER_MS": "0"}, TableServiceSettings.read)
