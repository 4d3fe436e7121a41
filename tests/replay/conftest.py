"""Recorded games for the replay and audit tests: random legal play, written by RecordBuilder.

Each game is played with :mod:`cardtable.bots.random_play`'s random legal actions from a
fixed seed, so the records are the same on every run. Decks come from shuffle seeds (with their
proofs) as the table service makes them, unless a test asks for plain shuffled decks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from cardtable_tools.simulation.records import Script, record_random_game

#: The game of each test record: (game, players, options, seed). Hearts plays the classic game
#: so that every passing direction appears; Whist with 4 players has 24 deals.
GAMES: dict[str, tuple[str, int, dict[str, Any], int]] = {
    "whist": ("whist", 4, {}, 11),
    "358": ("358", 3, {}, 12),
    "belote": ("belote", 4, {}, 13),
    "hearts": ("hearts", 4, {}, 14),
}


def record_game(
    game: str,
    players: int,
    options: Mapping[str, Any],
    seed: int,
    *,
    proofs: bool = True,
    script: Script | None = None,
    seats: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A whole game played at random (or by ``script``), as a record."""
    return record_random_game(
        game, players, options, seed, shuffle_proofs=proofs, script=script, seats=seats
    )


def belote_throw_in_first(state: Any, seat: int) -> str | None:
    """Everybody passes twice in the first deal, so it is thrown in."""
    return "pass" if state.deal_number == 1 and state.phase == "bid" else None


_RECORDS: dict[str, dict[str, Any]] = {}


def game_record(name: str) -> dict[str, Any]:
    """The test record of ``name`` (a fresh copy, safe to tamper with)."""
    if name not in _RECORDS:
        game, players, options, seed = GAMES[name]
        script = belote_throw_in_first if game == "belote" else None
        seats = [{"seat": seat, "name": f"player{seat}"} for seat in range(players)]
        _RECORDS[name] = record_game(game, players, options, seed, script=script, seats=seats)
    return copy.deepcopy(_RECORDS[name])


@pytest.fixture(params=sorted(GAMES))
def game_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def to_version_0(record: Mapping[str, Any]) -> dict[str, Any]:
    """The same record as the format's first draft wrote it: ``moves`` instead of ``actions``."""
    old = copy.deepcopy(dict(record))
    old["version"] = 0
    for deal in old["deals"]:
        actions = deal.pop("actions")
        deal["moves"] = [f"{entry['seat']} {entry['action']}" for entry in actions]
    return old
