"""A timed-out turn is played by the table's computer player, at its level, not at random.

The decider alone, on the rules service's handlers in-process, with a clock the test moves and
a fixed seed: the move made for the timed-out seat is the one the table's strategy chooses
from that seat's view with a generator seeded so.
"""

from __future__ import annotations

import doctest
import random

import pytest

from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import SearchStrategy
from cardtable.platform.tokens import PERSON, Principal
from cardtable.table_service import stand_in
from cardtable.table_service.commands import Decider, Decision, Environment, Table
from cardtable.table_service.limits import TableLimits
from cardtable.table_service.state import TableState, apply_batch
from cardtable.views.decode import decode_view
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2
from tests.table_service.local_rules import LocalRules

SEED = bytes(range(32))


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _fold(table: Table, decision: Decision) -> None:
    """What the application does once a decision's events are appended."""
    version = table.state.version + 1
    apply_batch(
        table.state, events_pb2.EventBatch(table_version=version, events=decision.events), version
    )
    table.adopt(decision)


async def _running_table(decider: Decider, strategy: str) -> Table:
    """A Hearts table of four people with a 10 s timer, started and dealt."""
    settings = events_pb2.TableSettings(
        turn_timer_ms=10_000, fill_with_bots=False, bot_strategy=strategy
    )
    request = events_pb2.TableCreated(game="hearts", seats=4, settings=settings)
    table = Table(TableState(table_id="t"))
    _fold(table, await decider.create_table(Principal("p0", PERSON), request))
    for seat in range(4):
        _fold(table, await decider.join(table, Principal(f"p{seat}", PERSON), seat))
    return table


async def _seat_view(table: Table, seat: int) -> dict[str, object]:
    assert table.game_state is not None
    reply = await LocalRules().get_view(
        rules_pb2.GetViewRequest(state=table.game_state, seat=seat, typed_view=True)
    )
    return decode_view(reply.seat_view)


async def _timed_out_moves(strategy: str, turns: int) -> list[tuple[str, str]]:
    """The first ``turns`` timed-out moves at a table, each beside the strategy's own choice
    from the seat's view with the same seed."""
    clock = Clock()
    decider = Decider(LocalRules(), Environment(now=clock, seed=lambda: SEED), TableLimits())
    table = await _running_table(decider, strategy)
    pairs = []
    for _ in range(turns):
        timer = table.state.timer
        assert timer is not None
        seat = timer.seats[0]
        expected = stand_in.stand_in_strategy(strategy).choose(
            await _seat_view(table, seat), random.Random(SEED)
        )
        clock.now = timer.deadline
        decision = await decider.timeout(table, table.state.turn)
        taken = [event.action_taken for event in decision.events if event.HasField("action_taken")]
        assert [(move.seat, move.by_timeout) for move in taken][:1] == [(seat, True)]
        pairs.append((taken[0].action, expected))
        _fold(table, decision)
    return pairs


async def test_a_timed_out_move_is_the_rules_players_choice() -> None:
    pairs = await _timed_out_moves("rules", turns=6)
    assert all(made == expected for made, expected in pairs)
    # Six timed-out moves from the pass to the first plays: a random player would not make
    # the rules player's choice every time.
    assert pairs[0][0].startswith("pass")


async def test_a_timed_out_move_is_the_searchs_choice_within_the_capped_budget() -> None:
    pairs = await _timed_out_moves("search", turns=2)
    assert all(made == expected for made, expected in pairs)
    strategy = stand_in.stand_in_strategy("search")
    assert strategy.budget_ms == stand_in.TIMEOUT_SEARCH_BUDGET_MS  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["random", "rules", "easy"])
def test_the_stand_in_is_the_strategy_the_table_names(name: str) -> None:
    assert stand_in.stand_in_strategy(name).name == strategy_by_name(name).name


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_a_searching_level_stands_in_within_the_capped_budget(level: str) -> None:
    strategy = stand_in.stand_in_strategy(level)
    assert isinstance(strategy, SearchStrategy) and strategy.worlds is None
    assert strategy.budget_ms == stand_in.TIMEOUT_SEARCH_BUDGET_MS


async def test_a_timed_out_move_at_a_hard_table_is_the_capped_searchs_choice() -> None:
    pairs = await _timed_out_moves("hard", turns=1)
    assert all(made == expected for made, expected in pairs)


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(stand_in)
    assert results.attempted > 0 and results.failed == 0


def test_a_strategy_that_fails_leaves_the_random_move_to_the_caller() -> None:
    class Broken:
        name = "broken"

        def choose(self, observation: object, rng: random.Random) -> str:
            raise RuntimeError("no idea")

    class Offside:
        name = "offside"

        def choose(self, observation: object, rng: random.Random) -> str:
            return "play XX"

    observation = {"legal_actions": ["play 2C"], "seat": 0, "to_act": [0]}
    assert stand_in.stand_in_move(Broken(), observation, SEED) is None
    assert stand_in.stand_in_move(Offside(), observation, SEED) is None
