"""The regret yardstick: a player who looks is closer to the objective than one who does not,
and the adaptive search keeps its budget a move on average."""

from __future__ import annotations

import doctest
import json
import random
import statistics

import pytest

from cardtable.bots.search import SearchStrategy
from cardtable.bots.strategy import RandomStrategy
from cardtable.engine.actions import PLAY
from cardtable.engine.cards import parse_cards
from cardtable.engine.game import GameState
from cardtable_tools import player_spec
from cardtable_tools.bench import search_regret
from tests.engine.test_hearts import SPLIT_HANDS, no_pass_deal, play_cards

#: Positions and every move's value at each.
Weighed = tuple[list[GameState], list[dict[str, float]]]


@pytest.fixture(scope="module")
def weighed() -> Weighed:
    rng = random.Random(4)
    positions = search_regret.choice_positions("whist", 4, 12, rng)
    return positions, [search_regret.move_values(state, 30, rng) for state in positions]


def test_the_best_move_has_no_regret_and_every_move_is_weighed(weighed: Weighed) -> None:
    positions, values = weighed
    for state, moves in zip(positions, values, strict=True):
        seat = state.to_act()[0]
        assert sorted(moves) == sorted(state.observation(seat)["legal_actions"])
        assert len(moves) > 1


def test_a_searching_player_regrets_less_than_a_random_one(weighed: Weighed) -> None:
    positions, values = weighed
    searching = search_regret.measure_regret(SearchStrategy(worlds=30), positions, values, 2)
    guessing = search_regret.measure_regret(RandomStrategy(), positions, values, 2)
    assert min(searching.regrets) == 0 and min(guessing.regrets) >= 0
    assert statistics.fmean(searching.regrets) < statistics.fmean(guessing.regrets)
    assert guessing.report()["work_ms_a_move"] == 0


def test_the_adaptive_search_spends_its_budget_on_average_over_the_positions(
    weighed: Weighed,
) -> None:
    positions, values = weighed
    player = SearchStrategy(budget_ms=5, adaptive=True)
    moves = 2 * len(positions)
    report = search_regret.measure_regret(player, positions, values, 2).report()
    # the budget a move, and one overrun (a world, under a budget here) over all the moves
    assert report["work_ms_a_move"] <= 5 + 5 / moves
    assert report["most_work_ms"] > 5


def test_the_command_prints_one_report(capsys: pytest.CaptureFixture[str]) -> None:
    search_regret.main(
        [
            "--game",
            "358",
            "--positions",
            "3",
            "--oracle-worlds",
            "5",
            "--seeds",
            "1",
            "--player",
            "search:budget_ms=1",
            "--player",
            "easy",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert report["positions"] == 3
    assert set(report["players"]) == {"search:budget_ms=1", "easy"}
    assert report["players"]["easy"]["regret"] >= 0


def test_interchangeable_cards_share_their_mean_in_the_oracle() -> None:
    state = no_pass_deal(SPLIT_HANDS)
    play_cards(state, "2C AC 2D 2S")  # seat 3 now holds every spade but the two
    spades = parse_cards("10S JS QS KS")
    values = {PLAY[card]: value for card, value in zip(spades, [1.0, 3.0, -5.0, 0.5], strict=True)}
    evened = search_regret.as_one_move(state, values)
    # The ten and jack are one move; the queen and the king each stand alone.
    assert [evened[PLAY[card]] for card in spades] == [2.0, 2.0, -5.0, 0.5]


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(player_spec)
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.parametrize(
    "game,players,phase,prefix", [("whist", 4, "bid", "bid "), ("358", 3, "exchange", "give ")]
)
def test_on_bids_and_gives_too_a_player_who_looks_regrets_less_than_one_who_guesses(
    game: str, players: int, phase: str, prefix: str
) -> None:
    rng = random.Random(6)
    positions = search_regret.choice_positions(game, players, 8, rng, phase=phase)
    assert all(state.phase == phase for state in positions)
    values = [search_regret.move_values(state, 30, rng) for state in positions]
    assert all(text.startswith(prefix) for moves in values for text in moves)
    searching = search_regret.measure_regret(SearchStrategy(worlds=30), positions, values, 2)
    guessing = search_regret.measure_regret(RandomStrategy(), positions, values, 2)
    assert statistics.fmean(searching.regrets) < statistics.fmean(guessing.regrets)


def test_a_phase_without_listed_choices_is_refused() -> None:
    with pytest.raises(SystemExit):
        search_regret.main(["--game", "hearts", "--phase", "pass", "--positions", "1"])
