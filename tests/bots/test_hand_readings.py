"""Readings kept from move to move (``HandReadings``): the same worlds for less work.

A seat that keeps what the others' decisions said of each hand it has read must draw, at every
move of a deal, exactly the worlds it draws reading everything afresh: the readings are exact.
What changes is the work: late in a deal the hands the worlds give the others are few, so a
world costs the search a fraction of what it did.
"""

from __future__ import annotations

import random

import pytest

from cardtable.bots.beliefs import (
    PLACEMENT_UNITS,
    WORLD_BUILD_UNITS,
    HandReadings,
    WorldSampler,
    log_likelihood,
    reading_context,
)
from cardtable.bots.determinize import sample_placement
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.bots.search import SearchStrategy
from cardtable.engine.actions import format_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.hidden import Play
from cardtable.engine.registry import game_spec

WEIGHED_GAMES = [("whist", 4), ("358", 3), ("belote", 4), ("hearts", 4)]


def one_deal(game: str, players: int, seed: int) -> list[GameState]:
    """Every position (each a clone) of the first deal, of five cards or more a hand and played
    out (not thrown in), that the rule-based player plays, once the cards are dealt."""
    rng = random.Random(seed)
    state = game_spec(game).new_game(players, None, 0)
    while not state.is_over():
        if state.needs_deal():
            state.deal(shuffled_deck(state, rng))
            continue
        big = min(len(hand) for hand in state.hands) >= 5  # type: ignore[attr-defined]
        deals = len(state.deal_scores)
        positions = []
        while len(state.deal_scores) == deals:
            positions.append(state.clone())
            seat = state.to_act()[0]
            state.apply(seat, rules_action(state, seat))
        if big and any(position.phase == "play" for position in positions):  # type: ignore[attr-defined]
            return positions
    raise AssertionError("the game ended before such a deal")


def sampler_for(state: GameState, readings: HandReadings | None) -> WorldSampler:
    seat = state.to_act()[0]
    view = state.observation(seat)
    return WorldSampler(
        view, hidden_cards(view), sample_placement, state.spec.direction, True, readings=readings
    )


@pytest.mark.parametrize(("game", "players"), WEIGHED_GAMES, ids=[g for g, _ in WEIGHED_GAMES])
def test_kept_readings_draw_the_worlds_of_reading_afresh_for_less_work(
    game: str, players: int
) -> None:
    """One seat follows a whole deal; at each of its moves both samplers draw from the same
    rng: the same worlds every time, never more work with readings kept, and in the deal's
    last moves, where the hands left to give the others are few, much less."""
    observer = 1
    readings = HandReadings()
    works: list[tuple[int, int]] = []
    for state in one_deal(game, players, seed=3):
        if state.to_act()[0] != observer:
            continue
        kept, fresh = sampler_for(state, readings), sampler_for(state, None)
        if not fresh.weigh:
            continue
        rng_kept, rng_fresh = random.Random(len(works)), random.Random(len(works))
        for _ in range(12):
            assert kept.draw(rng_kept).hands == fresh.draw(rng_fresh).hands  # type: ignore[attr-defined]
        works.append((kept.work, fresh.work))
    assert len(works) >= 4, works
    print(f"{game}: work a move, kept and afresh: {works}")
    assert sum(kept for kept, _ in works) <= sum(fresh for _, fresh in works)
    if game != "belote":  # its plays weigh no world: nothing to read again
        last_kept, last_fresh = (sum(move) for move in zip(*works[-2:], strict=True))
        assert last_kept < 0.6 * last_fresh, works


def test_a_kept_reading_is_the_likelihood_read_afresh() -> None:
    """On a 3-5-8 position late in the deal, every hand's reading kept from the deal's
    earlier moves sums to what reading everything now gives."""
    observer = 0
    readings = HandReadings()
    last: GameState | None = None
    for state in one_deal("358", 3, seed=5):
        if state.to_act()[0] == observer and state.phase == "play":  # type: ignore[attr-defined]
            sampler = sampler_for(state, readings)
            sampler.draw(random.Random(1))
            last = state
    assert last is not None and len(last.tricks) >= 10  # type: ignore[attr-defined]
    kept, fresh = sampler_for(last, readings), sampler_for(last, None)
    rng = random.Random(4)
    for _ in range(20):
        placement = sample_placement(kept.hidden, rng)
        assert kept._log_likelihood(placement) == pytest.approx(fresh._log_likelihood(placement))
    # Only the placement's draw is charged for a world whose hands were all read before.
    kept.work = 0
    kept._log_likelihood(placement)
    assert kept.work == PLACEMENT_UNITS
    kept.draw(rng)
    assert kept.work >= PLACEMENT_UNITS + WORLD_BUILD_UNITS


def test_readings_are_dropped_for_another_deal_or_plays_that_do_not_follow() -> None:
    plays = [Play(1, 5, (), 0), Play(2, 9, (5,), 0)]
    readings = HandReadings()
    state = game_spec("whist").new_game(4, None, 0)
    state.deal(shuffled_deck(state, random.Random(2)))
    readings.start("deal 1", plays[:1])
    readings.read(state, 0, 1, state.hands[1], plays[:1], None)  # type: ignore[attr-defined]
    assert readings.known == 1
    readings.start("deal 1", plays)  # the plays go on: kept
    assert readings.known == 1
    readings.start("deal 1", plays[1:])  # not the plays read before: dropped
    assert readings.known == 0
    readings.read(state, 0, 1, state.hands[1], [], None)  # type: ignore[attr-defined]
    readings.start("deal 2", plays[1:])
    assert readings.known == 0


def test_the_reading_context_names_the_deal_and_its_public_decisions() -> None:
    states = list(one_deal("whist", 4, seed=7))
    bidding = [state for state in states if state.phase == "bid"]  # type: ignore[attr-defined]
    contexts = {reading_context(state.observation(0)) for state in bidding}
    assert len(contexts) == len(bidding), "every bid changes what a hand's reading depends on"
    playing = [state for state in states if state.phase == "play"]  # type: ignore[attr-defined]
    assert len({reading_context(state.observation(0)) for state in playing}) == 1


@pytest.mark.parametrize("game", ["358", "whist"])
def test_a_player_keeping_readings_plays_the_same_moves_twice_and_counts_its_work(
    game: str,
) -> None:
    players = 3 if game == "358" else 4
    rng_seed = 9

    def play() -> tuple[list[str], int, int]:
        strategy = SearchStrategy(
            budget_ms=2, weigh_worlds=True, plan_game=True, adaptive=True, keep_readings=True
        )
        rng = random.Random(rng_seed)
        moves, world_work, work = [], 0, 0
        for state in one_deal(game, players, seed=11):
            seat = state.to_act()[0]
            if seat != 0:
                continue
            moves.append(strategy.choose(state.observation(seat), rng))
            world_work += strategy.last_world_work
            work += strategy.last_work
        return moves, world_work, work

    first, second = play(), play()
    assert first == second
    moves, world_work, work = first
    assert 0 < world_work < work
    assert all(move for move in moves)


def test_log_likelihood_sums_a_term_a_seat() -> None:
    """The readings kept are seat by seat, so the whole likelihood must be their sum."""
    state = next(
        state
        for state in one_deal("belote", 4, seed=4)
        if state.phase == "play"  # type: ignore[attr-defined]
    )
    hands = [list(hand) for hand in state.hands]  # type: ignore[attr-defined]
    readings = HandReadings()
    readings.start("deal", [])
    total = sum(readings.read(state, 0, seat, hands[seat], [], None)[0] for seat in range(1, 4))
    assert total == pytest.approx(log_likelihood(state, 0, hands))
    assert format_action(rules_action(state, state.to_act()[0]))
