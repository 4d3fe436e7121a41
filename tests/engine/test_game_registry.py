"""Every registered game provides every part, in its own package, and each part works.

docs/architecture.md#adding-a-game lists the parts; these tests are its checklist. Each game is
played at random from a fixed seed until every one of its phases has come up, and at each step the
parts are used on the real position: the determinization view rebuilds the state from each
seat's observation, the narration tells the game's own facts, the view message and the log's
fact messages round-trip, and the rule-based player and the rating formula accept it.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import random
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from cardtable.bots.determinize import sample_placement
from cardtable.bots.rules import rules_action
from cardtable.engine import facts as shared_facts
from cardtable.engine.definition import GameDefinition
from cardtable.engine.determinize import hidden_cards, state_from_view
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.game import GameState
from cardtable.engine.hidden import GameView
from cardtable.engine.narration import (
    CardMark,
    CardsMark,
    GameNarration,
    Gathered,
    Line,
    Narrator,
    Quiet,
    ScoreRow,
    Signed,
    SuitMark,
)
from cardtable.engine.rating import rating_changes
from cardtable.engine.record import RecordBuilder, load_record
from cardtable.engine.registry import DEFINITIONS, GAMES, game_definition, game_spec
from cardtable.platform.fact_messages import KINDS, engine_fact, fact_message
from cardtable.replay.render import GameRenderer
from cardtable.replay.session import Viewpoint, replay_steps
from cardtable.views.decode import decode_view
from cardtable.views.encode import encode_view
from cardtable.views.names import PHASES
from tests.bots.test_determinize import comparable
from tests.engine.test_rules_doc import sections

REPO = Path(__file__).resolve().parents[2]
GAMES_PACKAGE = "cardtable.engine.games"
NAMES = sorted(DEFINITIONS)
#: The facts every game shares; a game's own facts are the others.
SHARED_FACTS = {
    value
    for value in vars(shared_facts).values()
    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
}
PARTS = ("__init__", "rules", "phases", "view", "narration")


def package_of(game: GameDefinition) -> str:
    """The game's package, from where its rules live."""
    module = game.spec.state_type.__module__
    assert module.startswith(GAMES_PACKAGE + ".") and module.endswith(".rules"), module
    return module.removesuffix(".rules")


# -- a random game, step by step -----------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One input applied: a copy of the state after it, and the facts it produced."""

    state: GameState
    facts: list[Fact]


@dataclass
class Playout:
    """Random games of one kind, their steps and their records."""

    steps: list[Step] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    phases: set[str] = field(default_factory=set)


def random_game(name: str, seed: int, max_deals: int) -> tuple[list[Step], dict[str, Any]]:
    """A game with random legal actions, until it ends or ``max_deals`` are played."""
    spec = game_spec(name)
    rng = random.Random(f"registry-{name}-{seed}")
    builder = RecordBuilder.start(spec, spec.max_players, {}, rng.randrange(spec.max_players))
    state = builder.state
    steps: list[Step] = []
    while not state.is_over():
        if state.needs_deal():
            if state.deal_number >= max_deals:
                break
            deck = list(state.deck())
            rng.shuffle(deck)
            facts = builder.deal(deck)
        else:
            seat = rng.choice(state.to_act())
            choice = state.card_set_choice(seat)
            if choice is not None:
                action = choice.make(rng.sample(choice.cards, choice.count))
            else:
                action = rng.choice(state.legal_actions(seat))
            facts = builder.act(seat, str(action))
        steps.append(Step(state.clone(), facts))
    return steps, builder.to_json()


PLAYOUTS: dict[str, Playout] = {}


def playout(name: str) -> Playout:
    """Games enough that every phase comes up (3-5-8's exchange needs a second deal)."""
    if name not in PLAYOUTS:
        every_phase = {phase.value for phase in DEFINITIONS[name].phases} - {"over"}
        result = Playout()
        for seed in range(20):
            steps, record = random_game(name, seed, max_deals=3)
            result.steps += steps
            result.records.append(record)
            result.phases |= {step.state.phase for step in steps}
            if result.phases >= every_phase:
                break
        PLAYOUTS[name] = result
    return PLAYOUTS[name]


# -- the registry --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_the_registry_names_each_game_by_its_spec(name: str) -> None:
    game = DEFINITIONS[name]
    assert isinstance(game, GameDefinition)
    assert game.name == game.spec.name == name
    assert GAMES[name] is game.spec
    assert game_definition(name.upper()) is game and game_spec(name) is game.spec


@pytest.mark.parametrize("name", NAMES)
def test_every_part_lives_in_the_game_package(name: str) -> None:
    """Adding a game touches one folder: everything the definition holds comes from it."""
    game = DEFINITIONS[name]
    package = package_of(game)
    assert importlib.import_module(package).GAME is game
    for part in PARTS[1:]:
        importlib.import_module(f"{package}.{part}")
    assert game.phases.__module__ == f"{package}.phases"
    assert type(game.view).__module__ == f"{package}.view"
    assert game.narration.__module__ == f"{package}.narration"
    for kind in game.facts:
        assert kind.__module__ == f"{package}.rules"


@pytest.mark.parametrize("name", NAMES)
def test_the_rules_module_points_to_its_section_of_the_rulebook(name: str) -> None:
    module = importlib.import_module(package_of(DEFINITIONS[name]) + ".rules")
    assert module.__file__ is not None
    docstring = ast.get_docstring(ast.parse(Path(module.__file__).read_text())) or ""
    anchors = re.findall(r"docs/rules\.md#([\w-]+)", docstring)
    assert anchors, f"{name}'s rules.py names no section of docs/rules.md"
    assert set(anchors) <= set(sections())


@pytest.mark.parametrize("name", NAMES)
def test_the_examples_in_the_game_package_run(name: str) -> None:
    package = package_of(DEFINITIONS[name])
    attempted = 0
    for part in PARTS:
        results = doctest.testmod(importlib.import_module(f"{package}.{part}"))
        assert results.failed == 0, f"{package}.{part}"
        attempted += results.attempted
    assert attempted > 0


@pytest.mark.parametrize(
    "module",
    [
        "cardtable.engine.determinize",
        "cardtable.engine.narration",
        "cardtable.engine.interchangeable",
    ],
)
def test_the_examples_of_the_shared_parts_run(module: str) -> None:
    results = doctest.testmod(importlib.import_module(module))
    assert results.attempted > 0 and results.failed == 0


# -- phases --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_phases_are_an_enum_of_the_phases_the_state_takes(name: str) -> None:
    phases = DEFINITIONS[name].phases
    assert issubclass(phases, StrEnum)
    assert phases("deal").name == "DEAL" and phases("over").name == "OVER"
    # The values are what snapshots, logs and views hold: the view message has one for each.
    assert {phase.value for phase in phases} <= set(PHASES)
    seen = playout(name).phases
    assert seen >= {phase.value for phase in phases} - {"over"}
    for step in playout(name).steps:
        assert isinstance(step.state.phase, phases)
        assert step.state.to_snapshot()["state"]["phase"] == step.state.phase


# -- the determinization view -------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_the_view_rebuilds_a_state_each_seat_cannot_tell_from_the_real_one(name: str) -> None:
    game = DEFINITIONS[name]
    assert isinstance(game.view, GameView)
    assert game.view.direction == game.spec.direction in (1, -1)
    rng = random.Random(name)
    checked: set[str] = set()
    for step in playout(name).steps:
        state = step.state
        if state.phase in ("deal", "over"):
            continue
        for seat in range(state.num_players):
            observation = state.observation(seat)
            hidden = hidden_cards(observation)
            assert hidden.places[: state.num_players] == tuple(
                f"hand {other}" for other in range(state.num_players)
            )
            assert hidden.places[state.num_players :] == game.view.extra_places
            world = state_from_view(observation, sample_placement(hidden, rng), hidden)
            assert type(world) is type(state)
            assert comparable(world.observation(seat)) == comparable(observation)
        checked.add(state.phase)
    assert checked == {phase.value for phase in game.phases} - {"deal", "over"}


# -- the narration -------------------------------------------------------------------------
PART_TYPES = (str, CardMark, CardsMark, SuitMark, Quiet, Signed)


def _check_parts(parts: tuple[object, ...]) -> None:
    assert parts and all(isinstance(part, PART_TYPES) for part in parts), parts


@pytest.mark.parametrize("name", NAMES)
def test_the_narration_tells_the_game_from_each_point_of_view(name: str) -> None:
    game = DEFINITIONS[name]
    told: set[type] = set()
    for record in map(load_record, playout(name).records):
        players = record.players
        for viewpoint in [Viewpoint(seat=0), Viewpoint(), Viewpoint(open=True)]:
            narration = game.narration(Narrator(viewpoint.seat, record.spec.teams), players)
            assert isinstance(narration, GameNarration)
            assert isinstance(narration.trick_points, bool)
            for step in replay_steps(record, viewpoint):
                public = step.public
                for fact in step.facts:
                    if isinstance(fact, DealStarted):
                        for details in narration.start_deal(fact, public):
                            _check_parts(details)
                    elif isinstance(fact, DealScored):
                        rows = narration.score_rows(fact, {}, public)
                        assert rows and all(isinstance(row, ScoreRow) for row in rows)
                        assert all(len(row.cells) == players for row in rows)
                    else:  # the replay tells the shared facts, the game its own (and BidMade)
                        for item in narration.tell(fact, public):
                            assert isinstance(item, Gathered | Line)
                            _check_parts(item.item if isinstance(item, Gathered) else item.parts)
                            told.add(type(fact))
                if step.seat is not None and step.action is None:
                    kind = step.action_kind or ""
                    for line in narration.hidden_action(step.seat, kind, step.facts, public):
                        _check_parts(line.parts)
                for seat in range(players):
                    assert all(isinstance(note, str) for note in narration.seat_notes(public, seat))
                assert all(isinstance(chip, str) for chip in narration.table_chips(public))
            # The replay, which asks the narration for all that, runs through the record.
            renderer = GameRenderer(record, viewpoint)
            renderer.intro()
            for step in replay_steps(record, viewpoint):
                renderer.render(step)
            renderer.close()
    assert told, f"{name}'s narration tells none of the game's facts"


# -- what lives outside the folder: messages, the bots' rules, the rating formula ----------
@pytest.mark.parametrize("name", NAMES)
def test_the_game_facts_have_log_messages_and_round_trip(name: str) -> None:
    game = DEFINITIONS[name]
    for kind in game.facts:
        assert kind not in SHARED_FACTS and "audience" in kind._fields
        assert kind in KINDS.values(), f"{kind.__name__} has no line in fact_messages.KINDS"
    for step in playout(name).steps:
        for fact in step.facts:
            assert type(fact) in game.facts or type(fact) in SHARED_FACTS
            assert engine_fact(fact_message(fact), fact.audience) == fact


def test_every_fact_kind_belongs_to_the_shared_facts_or_to_one_game() -> None:
    owned = [kind for game in DEFINITIONS.values() for kind in game.facts]
    assert len(owned) == len(set(owned))
    assert set(KINDS.values()) == SHARED_FACTS | set(owned)


@pytest.mark.parametrize("name", NAMES)
def test_the_seat_view_message_carries_every_observation(name: str) -> None:
    for step in playout(name).steps[::5]:
        for seat in [*range(step.state.num_players), None]:
            observation = step.state.observation(seat)
            assert decode_view(encode_view(observation)) == observation


@pytest.mark.parametrize("name", NAMES)
def test_the_rule_based_player_and_the_rating_formula_know_the_game(name: str) -> None:
    for step in playout(name).steps:
        state = step.state
        for seat in state.to_act():
            action = rules_action(state, seat)
            assert state.why_illegal(seat, action) is None
    spec = DEFINITIONS[name].spec
    # Partners finish on the same total: a seat's total here is its team's number.
    teams = spec.teams or tuple((seat,) for seat in range(spec.max_players))
    totals = [
        next(i for i, team in enumerate(teams) if seat in team) for seat in range(spec.max_players)
    ]
    changes = rating_changes(name, [10 * total for total in totals], [1500.0] * len(totals))
    assert len(changes) == spec.max_players
