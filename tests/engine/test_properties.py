"""Properties every game keeps, over many random games (one harness for all four games).

Each game module has its own scenarios; this harness checks what must hold whatever the
rules: invariants of every deal, no hidden card in any observation, snapshots and clones
that continue exactly like the original, and records that replay to the same results.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from cardtable.bots.random_play import random_action, shuffled_deck
from cardtable.engine.cards import parse_card
from cardtable.engine.facts import fact_to_dict, visible_to
from cardtable.engine.game import GameState
from cardtable.engine.record import load_record, verify_record
from cardtable.engine.registry import GAMES, game_spec
from cardtable_tools.simulation.invariants import InvariantChecker
from cardtable_tools.simulation.playout import play_random_game
from cardtable_tools.simulation.records import record_random_game

CARD_TOKEN = re.compile(r"^(10|[2-9JQKA])[CDHS]$")

TABLE_SIZES = [
    (name, players)
    for name, spec in sorted(GAMES.items())
    for players in range(spec.min_players, spec.max_players + 1)
]
GAMES_PER_SIZE = 40


def _quick(name: str) -> dict[str, Any]:
    return {"quick": True} if name == "hearts" else {}


@pytest.mark.parametrize(("name", "players"), TABLE_SIZES)
def test_random_games_keep_invariants(name: str, players: int) -> None:
    rng = random.Random(f"{name}-{players}")
    checker = InvariantChecker()
    for _ in range(GAMES_PER_SIZE):
        state, deals, actions = play_random_game(game_spec(name), players, {}, rng, checker)
        assert state.is_over()
        assert deals >= 1 and actions >= 1
        places = state.places()
        assert places is not None and len(places) == players and min(places) == 1
    assert checker.violations == []


def _card_tokens(value: Any) -> Iterator[str]:
    """Every card-looking word anywhere in a JSON value."""
    if isinstance(value, str):
        yield from (word for word in value.split() if CARD_TOKEN.match(word))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _card_tokens(item)
    elif isinstance(value, list):
        for item in value:
            yield from _card_tokens(item)


def _seen_cards(facts: list[Any], seat: int | None) -> set[str]:
    seen: set[str] = set()
    for fact in facts:
        if visible_to(fact, seat):
            seen.update(_card_tokens(fact_to_dict(fact)))
    return seen


@pytest.mark.parametrize(("name", "players"), TABLE_SIZES)
def test_observations_never_show_unseen_cards(name: str, players: int) -> None:
    rng = random.Random(f"leak-{name}-{players}")
    spec = game_spec(name)
    for _ in range(6):
        state = spec.new_game(players, _quick(name), rng.randrange(players))
        history: list[Any] = []
        while not state.is_over():
            if state.needs_deal():
                history = list(state.deal(shuffled_deck(state, rng)))  # a new deal: new cards
            else:
                seat = rng.choice(state.to_act())
                history.extend(state.apply(seat, random_action(state, seat, rng)))
            if rng.random() < 0.2:
                for viewer in [None, *range(players)]:
                    shown = set(_card_tokens(state.observation(viewer)))
                    leaked = shown - _seen_cards(history, viewer)
                    assert not leaked, f"seat {viewer} sees {sorted(leaked)} in {state.phase}"


def _step(state: GameState, rng: random.Random) -> list[Any]:
    if state.needs_deal():
        return state.deal(shuffled_deck(state, rng))
    seat = rng.choice(state.to_act())
    return state.apply(seat, random_action(state, seat, rng))


@pytest.mark.parametrize(("name", "players"), TABLE_SIZES)
def test_snapshot_and_clone_continue_like_the_original(name: str, players: int) -> None:
    rng = random.Random(f"snap-{name}-{players}")
    spec = game_spec(name)
    for _ in range(4):
        state = spec.new_game(players, _quick(name), rng.randrange(players))
        while not state.is_over():
            if rng.random() < 0.05:
                snapshot = json.loads(json.dumps(state.to_snapshot()))
                restored = type(state).from_snapshot(snapshot)
                copy = state.clone()
                assert restored.to_snapshot() == state.to_snapshot()
                seed = rng.random()
                expected = _continue(state.clone(), random.Random(seed))
                assert _continue(restored, random.Random(seed)) == expected
                before = state.to_snapshot()
                _continue(copy, random.Random(seed))
                assert state.to_snapshot() == before, "a clone shares state with its original"
            _step(state, rng)


def _continue(state: GameState, rng: random.Random, steps: int = 30) -> list[Any]:
    facts: list[Any] = []
    for _ in range(steps):
        if state.is_over():
            break
        facts.extend(fact_to_dict(fact) for fact in _step(state, rng))
    return facts


def _record_random_game(name: str, players: int, seed: int) -> dict[str, Any]:
    return json.loads(json.dumps(record_random_game(name, players, _quick(name), seed)))


@pytest.mark.parametrize(("name", "players"), TABLE_SIZES)
def test_records_replay_to_the_same_results(name: str, players: int) -> None:
    for seed in range(3):
        data = _record_random_game(name, players, seed)
        report = verify_record(load_record(data))
        assert report.ok, report.problem
        assert list(report.totals) == data["result"]["totals"]
        assert list(report.places) == data["result"]["places"]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_tampered_records_are_caught(name: str) -> None:
    players = game_spec(name).min_players
    data = _record_random_game(name, players, 99)
    played = [deal for deal in data["deals"] if deal["scores"] is not None]

    changed_score = json.loads(json.dumps(data))
    target = next(deal for deal in changed_score["deals"] if deal["scores"] is not None)
    target["scores"][0] += 1
    report = verify_record(load_record(changed_score))
    assert not report.ok and "scores" in (report.problem or "")

    changed_card = json.loads(json.dumps(data))
    deal = next(deal for deal in changed_card["deals"] if deal["scores"] is not None)
    plays = [entry for entry in deal["actions"] if entry["action"].startswith("play ")]
    entry = plays[len(plays) // 2]
    card = parse_card(entry["action"].split()[1])
    entry["action"] = f"play {'AS' if card != parse_card('AS') else 'KS'}"
    report = verify_record(load_record(changed_card))
    assert not report.ok
    assert report.problem_deal == deal["number"]

    missing_action = json.loads(json.dumps(data))
    missing_action["deals"][0]["actions"].pop(len(missing_action["deals"][0]["actions"]) // 2)
    assert not verify_record(load_record(missing_action)).ok

    changed_result = json.loads(json.dumps(data))
    changed_result["result"]["totals"][0] += 5
    assert not verify_record(load_record(changed_result)).ok
    assert played


def test_truncated_or_foreign_records_are_refused() -> None:
    from cardtable.engine.errors import InvalidInput

    data = _record_random_game("hearts", 4, 1)
    with pytest.raises(InvalidInput):
        load_record({**data, "format": "something-else"})
    with pytest.raises(InvalidInput):
        load_record({**data, "version": 99})
    with pytest.raises(InvalidInput):
        load_record({**data, "deals": "nope"})
    with pytest.raises(InvalidInput):
        load_record({**data, "game": "poker"})
    truncated = json.loads(json.dumps(data))
    truncated["deals"][0]["deck"] = truncated["deals"][0]["deck"][:-1]
    report = verify_record(load_record(truncated))
    assert not report.ok and "deck order" in (report.problem or "")


def test_version_0_records_still_replay() -> None:
    data = _record_random_game("hearts", 4, 5)
    old = json.loads(json.dumps(data))
    old["version"] = 0
    for deal in old["deals"]:
        deal["moves"] = [f"{entry['seat']} {entry['action']}" for entry in deal.pop("actions")]
    report = verify_record(load_record(old))
    assert report.ok, report.problem
    assert list(report.totals) == data["result"]["totals"]
