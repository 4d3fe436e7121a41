"""The others' plays weigh hard's worlds in Whist, 3-5-8 and Hearts: what a card played says of
its hand.

Positions come from rule-based games a few tricks into a deal, where every play by another seat
is the rule-based choice, which is what the likelihood models: the real hands explain the plays
better than uniform draws do, and reading the plays puts more hidden cards where they really
are than reading the bids alone.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator

import pytest

from cardtable.bots import beliefs
from cardtable.bots.beliefs import (
    CANDIDATES_PER_WORLD,
    PLAY_READ_UNITS,
    WORLD_DRAW_UNITS,
    WorldSampler,
    card_then_for,
    played_by_seat,
    plays_log_likelihood,
)
from cardtable.bots.determinize import sample_placement, sample_world
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.rules import rules_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.hidden import deal_plays
from cardtable.engine.registry import game_spec
from cardtable_tools.bench.world_placement import share_placed_right
from tests.bots.positions import rules_positions

PLAYING_GAMES = [("whist", 4), ("358", 3), ("hearts", 4)]


def mid_deal_positions(game: str, players: int, seed: int, count: int) -> Iterator[GameState]:
    """One position a deal, two to four tricks in, from games the rule-based player plays."""

    def wanted(state: GameState) -> bool:
        return (
            state.phase == "play"
            and 2 <= len(state.tricks) <= 4  # type: ignore[attr-defined]
            and getattr(state, "cards_each", 8) > 4
        )

    return rules_positions(game, players, seed, count, wanted)


def plays_likelihood_of(world: GameState, observer: int) -> float:
    """How well ``world``'s hands explain the others' plays the observer saw."""
    view = world.observation(observer)
    plays = deal_plays(view, world.spec.direction)
    played = played_by_seat(plays, world.num_players)
    hands = [[*hand, *cards] for hand, cards in zip(world.hands, played, strict=True)]  # type: ignore[attr-defined]
    card_then = card_then_for(world)
    assert card_then is not None
    return plays_log_likelihood(world, observer, hands, plays, card_then)  # type: ignore[arg-type]


@pytest.mark.parametrize(("game", "players"), PLAYING_GAMES, ids=[g for g, _ in PLAYING_GAMES])
def test_the_real_hands_explain_the_plays_better_than_uniform_draws(
    game: str, players: int
) -> None:
    """The real hands made every play as the rules would; most draws do not (in the other
    positions the plays were the obvious ones on nearly any hand)."""
    above = positions = 0
    for state in mid_deal_positions(game, players, seed=4, count=40):
        observer = state.to_act()[0]
        view = state.observation(observer)
        hidden = hidden_cards(view)
        rng = random.Random(5)
        drawn = [plays_likelihood_of(sample_world(view, rng, hidden), observer) for _ in range(20)]
        real = plays_likelihood_of(state, observer)
        positions += 1
        above += real > statistics.fmean(drawn)
    print(f"{game}: the real hands above the mean draw in {above} of {positions} positions")
    assert above / positions >= 0.6, (game, above, positions)


@pytest.mark.parametrize(("game", "players"), PLAYING_GAMES, ids=[g for g, _ in PLAYING_GAMES])
def test_reading_the_plays_places_more_hidden_cards_right_than_the_bids_alone(
    game: str, players: int
) -> None:
    with_plays, bids_only = [], []
    for state in mid_deal_positions(game, players, seed=5, count=60):
        observer = state.to_act()[0]
        view = state.observation(observer)
        hidden = hidden_cards(view)
        direction = state.spec.direction
        reading = WorldSampler(view, hidden, sample_placement, direction, weigh=True)
        assert reading.plays, "every position here follows plays by the others"
        not_reading = WorldSampler(view, hidden, sample_placement, direction, weigh=True)
        not_reading.plays = []
        rng_a, rng_b = random.Random(12), random.Random(12)
        for _ in range(30):
            with_plays.append(share_placed_right(reading.draw(rng_a), state, observer))
            bids_only.append(share_placed_right(not_reading.draw(rng_b), state, observer))
    read, unread = statistics.fmean(with_plays), statistics.fmean(bids_only)
    print(f"{game}: {unread:.4f} of the hidden cards placed right by bids, {read:.4f} with plays")
    # Hearts hides more cards, and most plays of a deal are the obvious follow: less to read.
    assert read > unread + (0.003 if game == "hearts" else 0.004), (game, unread, read)


def test_a_play_against_the_rules_choice_is_less_likely_the_fewer_the_choices() -> None:
    for agreement in set(beliefs.PLAY_AGREEMENT.values()):

        def chance(choices: int, as_the_rules_would: bool, agreement: float = agreement) -> float:
            return beliefs.play_log_chance(choices, as_the_rules_would, agreement)

        assert chance(2, True) > chance(2, False)
        assert chance(5, True) > chance(5, False)
        # Among more cards the rule-based choice says less: the odds shrink.
        assert chance(2, True) - chance(2, False) > chance(5, True) - chance(5, False) > 0


def test_reading_the_plays_costs_the_search_its_work() -> None:
    state = next(mid_deal_positions("whist", 4, seed=6, count=1))
    observer = state.to_act()[0]
    view = state.observation(observer)
    sampler = WorldSampler(view, hidden_cards(view), sample_placement, 1, weigh=True)
    others = sum(1 for play in sampler.plays if play.seat != observer)
    assert others >= 2
    sampler.draw(random.Random(1))
    assert sampler.work == round(
        CANDIDATES_PER_WORLD * (WORLD_DRAW_UNITS + PLAY_READ_UNITS * others)
    )
    unweighed = WorldSampler(view, hidden_cards(view), sample_placement, 1, weigh=False)
    unweighed.draw(random.Random(1))
    assert unweighed.work == WORLD_DRAW_UNITS


def test_plays_weigh_no_world_where_the_rules_read_the_whole_state() -> None:
    """Belote's rule-based play is not a function of a hand and a trick."""
    state = game_spec("belote").new_game(4, None, 0)
    rng = random.Random(2)
    while not (state.phase == "play" and len(state.tricks) >= 2):
        if state.needs_deal():
            state.deal(shuffled_deck(state, rng))
            continue
        seat = state.to_act()[0]
        state.apply(seat, rules_action(state, seat))
    view = state.observation(state.to_act()[0])
    sampler = WorldSampler(view, hidden_cards(view), sample_placement, 1, weigh=True)
    assert sampler.plays == []
    assert card_then_for(state) is None
