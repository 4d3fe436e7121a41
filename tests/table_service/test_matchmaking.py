"""Matchmaking: which open tables a quick seat may join, what counts as a player's open table,
and the lobby's commands on a real application (no gRPC in between)."""

from __future__ import annotations

import asyncio
import doctest
import uuid

import pytest

from cardtable.platform.tokens import BOT, PERSON, Principal
from cardtable.table_service import matchmaking
from cardtable.table_service.errors import RuleViolationError
from cardtable.table_service.lobby_index import TableSummary
from cardtable.table_service.matchmaking import (
    DEFAULT_SETTINGS,
    Lobby,
    counts_as_open,
    matching_tables,
    open_tables_of,
    table_asked_for,
)
from cardtable.table_service.quotas import QuotaExceededError, QuotaSettings
from cardtable.table_service.state import FINISHED, OPEN, RUNNING
from cardtable_api.events.v1 import events_pb2
from tests.table_service.harness import Cluster

QUICK = {"quick": "true"}


def table(
    table_id: str,
    *,
    game: str = "hearts",
    seats: int = 4,
    taken: int = 1,
    status: str = OPEN,
    options: dict[str, str] | None = None,
    created_by: str = "host",
    bot_seats: int | None = 0,
) -> TableSummary:
    return TableSummary(
        table_id,
        game,
        seats,
        taken,
        status,
        options=QUICK if options is None else options,
        created_by=created_by,
        bot_seats=bot_seats,
    )


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(matchmaking)
    assert results.attempted and not results.failed


def test_a_request_names_the_game_as_the_rules_do_and_gets_the_default_settings() -> None:
    wanted = table_asked_for(" Hearts ", 4, QUICK)
    assert (wanted.game, wanted.seats, dict(wanted.options.values)) == ("hearts", 4, QUICK)
    assert wanted.settings == DEFAULT_SETTINGS
    no_timer = table_asked_for("hearts", 0, {}, events_pb2.TableSettings(turn_timer_ms=0))
    assert no_timer.settings.HasField("turn_timer_ms") and no_timer.settings.turn_timer_ms == 0
    assert no_timer.settings.fill_wait_ms == DEFAULT_SETTINGS.fill_wait_ms


def test_a_quick_seat_joins_only_tables_like_the_one_asked_for_oldest_first() -> None:
    lobby = [
        table("full", taken=4),
        table("other-game", game="belote"),
        table("other-variant", options={}),
        table("three-seats", game="hearts", seats=3),
        table("older"),
        table("newer", taken=3),
    ]
    wanted = table_asked_for("hearts", 4, QUICK)
    assert [summary.table_id for summary in matching_tables(lobby, wanted)] == ["older", "newer"]
    any_size = table_asked_for("hearts", 0, QUICK)
    assert [summary.table_id for summary in matching_tables(lobby, any_size)] == [
        "three-seats",
        "older",
        "newer",
    ]
    plain = table_asked_for("hearts", 4, {})
    assert [summary.table_id for summary in matching_tables(lobby, plain)] == ["other-variant"]


def test_open_tables_are_those_not_started_or_played_by_computer_players_alone() -> None:
    assert counts_as_open(table("waiting"))
    assert counts_as_open(table("bots-only", status=RUNNING, taken=4, bot_seats=4))
    assert not counts_as_open(table("people-play", status=RUNNING, taken=4, bot_seats=3))
    assert not counts_as_open(table("old-entry", status=RUNNING, taken=4, bot_seats=None))
    assert not counts_as_open(table("over", status=FINISHED, taken=4, bot_seats=4))
    lobby = [
        table("a"),
        table("b", status=RUNNING, taken=4, bot_seats=4),
        table("c", status=RUNNING, taken=4, bot_seats=1),
        table("d", created_by="someone else"),
    ]
    assert open_tables_of("host", lobby) == 2
    assert open_tables_of("nobody", lobby) == 0


async def _listed(lobby: Lobby, table_id: str, taken: int) -> None:
    """Until the lobby index shows ``taken`` seats at ``table_id`` (it is written after each
    append, and read back through the bucket's watcher)."""
    for _ in range(250):
        if any(
            summary.table_id == table_id and summary.seats_taken == taken
            for summary in lobby.tables(OPEN)
        ):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the lobby never showed {taken} seats taken at {table_id}")


async def test_quick_seats_fill_the_open_table_then_open_another(cluster: Cluster) -> None:
    lobby = Lobby(cluster.parts.app)
    wanted = table_asked_for("hearts", 4, QUICK)
    first = await lobby.quick_seat(Principal("p0", PERSON), "q0", wanted)
    assert first.seat == 0
    created = await cluster.parts.app.read(first.table_id)
    assert created.state.settings == DEFAULT_SETTINGS and created.state.created_by == "p0"
    for number in (1, 2, 3):
        await _listed(lobby, first.table_id, number)
        seating = await lobby.quick_seat(Principal(f"p{number}", PERSON), f"q{number}", wanted)
        assert (seating.table_id, seating.seat) == (first.table_id, number)
    assert (await cluster.parts.app.read(first.table_id)).state.status == RUNNING
    fifth = await lobby.quick_seat(Principal("p4", PERSON), "q4", wanted)
    assert fifth.table_id != first.table_id and fifth.seat == 0
    assert lobby.players_in_flight == 0


async def test_a_quick_seat_retried_after_its_table_filled_gets_the_first_answer(
    cluster: Cluster,
) -> None:
    lobby = Lobby(cluster.parts.app)
    wanted = table_asked_for("hearts", 4, QUICK)
    first = await lobby.quick_seat(Principal("p0", PERSON), "q0", wanted)
    for number in (1, 2, 3):
        await _listed(lobby, first.table_id, number)
        await lobby.quick_seat(Principal(f"p{number}", PERSON), f"q{number}", wanted)
    assert (await cluster.parts.app.read(first.table_id)).state.status == RUNNING
    for _ in range(250):  # until the lobby lists the table as running
        if any(s.table_id == first.table_id for s in lobby.tables(RUNNING)):
            break
        await asyncio.sleep(0.02)
    retried = await lobby.quick_seat(Principal("p2", PERSON), "q2", wanted)
    assert (retried.table_id, retried.seat) == (first.table_id, 2)
    another = await lobby.quick_seat(Principal("p2", PERSON), "q2-next", wanted)
    assert another.table_id != first.table_id


async def test_the_lobby_holds_people_to_their_quotas_and_not_computer_players(
    cluster: Cluster,
) -> None:
    quotas = QuotaSettings(open_tables_per_player=1, seats_per_player=1)
    checks: list[str] = []
    lobby = Lobby(cluster.parts.app, quotas, checks.append)
    host = Principal("host", PERSON)
    created = await lobby.create_table(host, "c1", table_asked_for("hearts", 4, QUICK))
    table_id = created.table.state.table_id
    await _listed(lobby, table_id, 0)
    with pytest.raises(QuotaExceededError, match="1 open tables"):
        await lobby.create_table(host, "c2", table_asked_for("hearts", 4, QUICK))
    again = await lobby.create_table(host, "c1", table_asked_for("hearts", 4, QUICK))
    assert again.already_applied and again.table.state.table_id == table_id
    seated = await lobby.join_table(host, table_id, "j1", None)
    assert seated.seat == 0
    with pytest.raises(RuleViolationError, match="already have a seat"):
        await lobby.join_table(host, table_id, "j2", 1)
    other = await lobby.create_table(
        Principal("other", PERSON), "c3", table_asked_for("hearts", 4, QUICK)
    )
    await _listed(lobby, other.table.state.table_id, 0)
    await _listed(lobby, table_id, 1)
    with pytest.raises(QuotaExceededError, match="you hold 1 seats"):
        await lobby.join_table(host, other.table.state.table_id, "j3", None)
    bots = Principal("bots", BOT)
    for number in range(2):  # the bot service has no open tables' or seats' quota
        made = await lobby.create_table(bots, f"b{number}", table_asked_for("hearts", 4, QUICK))
        assert made.table.state.created_by == "bots"
    assert "open_tables_per_player" in checks and "seats_per_player" in checks
    assert lobby.players_in_flight == 0


async def test_one_players_creates_take_turns_so_each_sees_the_one_before(
    cluster: Cluster,
) -> None:
    lobby = Lobby(cluster.parts.app, QuotaSettings(open_tables_per_player=2))
    flooder = Principal("flooder", PERSON)
    created = await asyncio.gather(
        *(
            lobby.create_table(flooder, str(uuid.uuid4()), table_asked_for("hearts", 4, QUICK))
            for _ in range(4)
        ),
        return_exceptions=True,
    )
    refused = [outcome for outcome in created if isinstance(outcome, QuotaExceededError)]
    assert len(refused) == 2
