"""What a deal's end is worth to the rest of the game: winning, Whist runs, 3-5-8 contracts."""

from __future__ import annotations

import doctest
import random

import pytest

from cardtable.bots import outlook as outlook_module
from cardtable.bots.outlook import (
    CONTRACT_VALUE,
    WIN_VALUE,
    contracts_left_value,
    measure_contract_values,
    outlook,
    streak_value,
)
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.bots.search import SearchStrategy, evaluate, rules_policy
from cardtable.engine.actions import parse_action
from cardtable.engine.game import GameState
from cardtable.engine.games.three_five_eight.rules import ThreeFiveEightState
from cardtable.engine.games.whist.rules import WhistState
from cardtable.engine.ranking import win_shares
from cardtable.engine.registry import game_spec


def final_win_shares(state: GameState) -> tuple[float, ...]:
    places = state.places()
    assert places is not None
    return win_shares(places, state.spec.teams)


def play_deal(state: GameState, rng: random.Random) -> None:
    """Deal if needed and play one whole deal with the rule-based player."""
    if state.needs_deal():
        state.deal(shuffled_deck(state, rng))
    deals = len(state.deal_scores)
    while len(state.deal_scores) == deals:
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))


def test_the_winner_of_a_finished_game_gets_the_win_over_the_others() -> None:
    state = game_spec("hearts").new_game(4, {"quick": True}, 0)
    play_deal(state, random.Random(3))
    assert state.is_over()
    shares = final_win_shares(state)
    assert sum(shares) == pytest.approx(1.0)
    winners = [seat for seat, share in enumerate(shares) if share > 0]
    for seat in range(4):
        others = [share for other, share in enumerate(shares) if other != seat]
        expected = WIN_VALUE["hearts"] * (shares[seat] - sum(others) / 3)
        assert outlook(state, seat) == pytest.approx(expected)
    assert all(outlook(state, seat) > 0 for seat in winners)
    assert all(outlook(state, seat) < 0 for seat in range(4) if seat not in winners)


def test_a_belote_team_wins_as_a_pair() -> None:
    state = game_spec("belote").new_game(4, None, 0)
    rng = random.Random(5)
    while not state.is_over():
        play_deal(state, rng)
    shares = final_win_shares(state)
    team = [seat for seat in range(4) if shares[seat] > 0]
    assert len(team) == 2 and team[1] - team[0] == 2
    assert shares[team[0]] == shares[team[1]] == 1.0


def test_whist_runs_are_worth_part_of_their_bonus_while_enough_deals_are_left() -> None:
    assert streak_value(4, 0, 1) == 5.0  # one exact bid away from +10, half the time
    assert streak_value(2, 0, 3) == 1.25
    assert streak_value(2, 0, 2) == 0.0  # three more needed, two deals left
    assert streak_value(0, 3, 5) == -2.5
    assert streak_value(0, 0, 10) == 0.0


def test_a_whist_seat_on_a_run_has_a_better_outlook_than_one_without() -> None:
    state = game_spec("whist").new_game(4, None, 0)
    rng = random.Random(2)
    while not state.is_over():
        play_deal(state, rng)
        if state.is_over():
            break
        assert isinstance(state, WhistState)
        runs = state.exact_runs
        for seat in range(4):
            if runs[seat] >= 1 and state.miss_runs[seat] == 0:
                worse = [
                    other for other in range(4) if runs[other] == 0 and state.miss_runs[other] > 0
                ]
                if worse and outlook(state, seat) != 0.0:
                    assert outlook(state, seat) > outlook(state, worse[0])
                    return
    pytest.fail("no deal left one seat on an exact run and another on a miss run")


def test_a_3_5_8_contract_still_to_play_counts_at_its_mean_value() -> None:
    state = game_spec("358").new_game(3, None, 0)
    play_deal(state, random.Random(4))
    assert isinstance(state, ThreeFiveEightState)
    declarer = next(seat for seat in range(3) if state.used[seat])
    used = state.used[declarer][0]
    kind = used if used in CONTRACT_VALUE else "trump"
    everyone = (
        sum(CONTRACT_VALUE["trump"] for _ in range(4)) + CONTRACT_VALUE["NT"] + CONTRACT_VALUE["MT"]
    )
    own = everyone - CONTRACT_VALUE[kind]
    assert contracts_left_value(state, declarer) == pytest.approx(own - everyone)


def test_the_contract_values_are_what_forced_contracts_score() -> None:
    """A smaller measurement than the one the table comes from agrees within its noise."""
    measured = measure_contract_values(3000, random.Random(11))
    for kind, value in CONTRACT_VALUE.items():
        assert measured[kind] == pytest.approx(value, abs=0.4), kind
    # Spending no-trump (the worst to be forced into) is what a contract choice should prefer.
    assert CONTRACT_VALUE["NT"] < CONTRACT_VALUE["trump"] < CONTRACT_VALUE["MT"]


def test_planning_adds_the_outlook_to_the_deal_the_playout_ends() -> None:
    """The last card of a quick Hearts game ends the game: planning adds the win to its value."""
    state = game_spec("hearts").new_game(4, {"quick": True}, 0)
    rng = random.Random(6)
    state.deal(shuffled_deck(state, rng))
    while sum(len(hand) for hand in state.hands) > 1:
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))
    seat = state.to_act()[0]
    action = state.legal_actions(seat)[0]
    plain, _ = evaluate(state, seat, action, rules_policy, random.Random(1))
    planned, _ = evaluate(state, seat, action, rules_policy, random.Random(1), plan_game=True)
    finished = state.clone()
    finished.apply(seat, action)
    assert planned - plain == pytest.approx(outlook(finished, seat))
    assert planned != plain


@pytest.mark.parametrize(
    "game,players,sets",
    [
        ("whist", 3, False),
        ("358", 3, False),
        ("358", 3, True),
        ("belote", 4, False),
        ("hearts", 4, False),
    ],
)
def test_a_searcher_that_weighs_worlds_and_plans_plays_whole_games_legally_and_reproducibly(
    game: str, players: int, sets: bool
) -> None:
    def play(seed: int) -> list[str]:
        state = game_spec(game).new_game(players, {"quick": True} if game == "hearts" else None, 0)
        bot = SearchStrategy(budget_ms=1, weigh_worlds=True, plan_game=True, contract_sets=sets)
        rng, deck_rng = random.Random(seed), random.Random(seed + 1)
        moves = []
        while not state.is_over() and len(moves) < 120:
            if state.needs_deal():
                state.deal(shuffled_deck(state, deck_rng))
                continue
            seat = state.to_act()[0]
            text = bot.choose(state.observation(seat), rng)
            state.apply(seat, parse_action(text))  # refuses an illegal move
            moves.append(text)
        return moves

    assert play(7) == play(7)


def test_the_docstring_examples_hold() -> None:
    results = doctest.testmod(outlook_module)
    assert results.attempted > 0 and results.failed == 0
