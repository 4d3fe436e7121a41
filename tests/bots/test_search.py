"""The search strategy sees only its seat's observation.

Changing the hidden cards of the real state, to another deal the seat's view allows, leaves
the observation (the strategy's whole input) unchanged, and so, with the same rng seed and a
fixed number of worlds, its choice.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardtable.bots.levels import strategy_and_options
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.rules import rules_action
from cardtable.bots.rules.hearts import pass_alternatives
from cardtable.bots.search import SearchStrategy, deal_advantage
from cardtable.engine.actions import Action, format_action, parse_action
from cardtable.engine.cards import SUIT_OF
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable_tools.player_spec import parse_player
from tests.bots.positions import random_positions
from tests.bots.test_rules import hearts_deal


def with_hidden_cards_swapped(state: GameState, seat: int) -> GameState | None:
    """The state with two unseen cards of one suit traded between two other seats' hands,
    which the seat's view allows (neither card is one it knows the place of, and neither is
    ruled out for its new holder); None if no such pair exists."""
    hidden = hidden_cards(state.observation(seat))
    unseen = set(hidden.unseen)
    others = [other for other in range(state.num_players) if other != seat]
    for first in others:
        for second in others:
            if second <= first:
                continue
            for card in state.hands[first]:
                for other_card in state.hands[second]:
                    if (
                        SUIT_OF[card] == SUIT_OF[other_card]
                        and {card, other_card} <= unseen
                        and card not in hidden.excluded[second]
                        and other_card not in hidden.excluded[first]
                    ):
                        changed = state.clone()
                        changed.hands[first].remove(card)
                        changed.hands[second].remove(other_card)
                        changed.hands[first] = sorted([*changed.hands[first], other_card])
                        changed.hands[second] = sorted([*changed.hands[second], card])
                        return changed
    return None


@pytest.mark.parametrize(
    ("game", "players"), [("hearts", 4), ("whist", 4), ("358", 3), ("belote", 4)]
)
def test_other_hidden_cards_same_input_same_choice(game: str, players: int) -> None:
    options = {"quick": True} if game == "hearts" else {}
    checked = 0
    for state in random_positions(game, players, options, seed=21, count=60, chance=0.2):
        seat = state.to_act()[0]
        observation = state.observation(seat)
        if len(observation["legal_actions"]) < 2:
            continue
        changed = with_hidden_cards_swapped(state, seat)
        if changed is None:
            continue
        assert changed.hands != state.hands
        assert changed.observation(seat) == observation
        choices = [
            SearchStrategy(worlds=3).choose(view.observation(seat), random.Random(7))
            for view in (state, changed)
        ]
        assert choices[0] == choices[1]
        checked += 1
        if checked == 4:
            break
    assert checked >= 2


def test_the_budget_is_counted_in_work_so_a_move_does_not_depend_on_the_clock() -> None:
    """The same observation, rng and budget give the same worlds and the same move, however
    long they take: a busy machine thinks as far as a quiet one."""
    state = next(
        position
        for position in random_positions("hearts", 4, {"quick": True}, seed=4, count=200)
        if len(position.observation(position.to_act()[0])["legal_actions"]) > 2
    )
    seat = state.to_act()[0]
    observation = state.observation(seat)
    small, large = SearchStrategy(budget_ms=2), SearchStrategy(budget_ms=6)
    moves = {small.choose(observation, random.Random(1)) for _ in range(3)}
    assert len(moves) == 1
    assert small.last_work >= small.work_budget and small.last_worlds >= 1
    worlds = small.last_worlds
    small.choose(observation, random.Random(1))
    assert small.last_worlds == worlds
    large.choose(observation, random.Random(1))
    assert large.last_worlds > worlds


def test_deal_advantage_is_oriented_so_higher_is_better() -> None:
    assert deal_advantage([13, 0, 0, 13], 1, lower_is_better=True) == pytest.approx(26 / 3)
    assert deal_advantage([8, -1, -1, 5], 0, lower_is_better=False) == pytest.approx(7)
    with pytest.raises(ValueError):
        SearchStrategy(playout="oracle")


def a_choice_of_cards(game: str, options: dict[str, Any], tricks: int) -> GameState:
    """A position of a random four-player game, ``tricks`` tricks or more into a deal, where
    the seat to play has more than one card to choose from."""
    return next(
        state
        for state in random_positions(game, 4, options, seed=3, count=300)
        if state.phase == "play"
        and len(state.tricks) >= tricks  # type: ignore[attr-defined]
        and len(state.legal_actions(state.to_act()[0])) > 1
    )


def test_worlds_are_weighed_in_the_games_named_only() -> None:
    """Named games draw weighted worlds (which cost more, so fewer fit the budget); the others
    play exactly as with no weighing."""
    hearts = a_choice_of_cards("hearts", {"quick": True}, tricks=3)
    whist = a_choice_of_cards("whist", {}, tricks=2)
    for state, weighed in ((hearts, False), (whist, True)):
        seat = state.to_act()[0]
        observation = state.observation(seat)
        named = SearchStrategy(budget_ms=5, weigh_worlds=("whist", "358"))
        plain = SearchStrategy(budget_ms=5)
        moves = [player.choose(observation, random.Random(3)) for player in (named, plain)]
        if weighed:
            assert named.last_worlds < plain.last_worlds
        else:
            assert moves[0] == moves[1] and named.last_worlds == plain.last_worlds


def test_without_weighing_contracts_a_bid_draws_uniform_worlds_and_a_play_weighed_ones() -> None:
    """``weigh_contracts=False``: a Whist bid after another seat's bid plays exactly as with no
    weighing (the same worlds at the same cost), while a card play still weighs its worlds."""

    def decided_after_another_seat(phase: str, state: GameState) -> bool:
        seat = state.to_act()[0]
        others_bid = any(bid is not None for other, bid in enumerate(state.bids) if other != seat)  # type: ignore[attr-defined]
        return state.phase == phase and others_bid and len(state.legal_actions(seat)) > 1

    positions = list(random_positions("whist", 4, {}, seed=4, count=400))
    bid = next(state for state in positions if decided_after_another_seat("bid", state))
    play = next(
        state
        for state in positions
        if decided_after_another_seat("play", state) and len(state.tricks) >= 2  # type: ignore[attr-defined]
    )
    for state, weighed in ((bid, False), (play, True)):
        observation = state.observation(state.to_act()[0])
        plays_only = SearchStrategy(budget_ms=5, weigh_worlds=True, weigh_contracts=False)
        plain = SearchStrategy(budget_ms=5)
        moves = [player.choose(observation, random.Random(3)) for player in (plays_only, plain)]
        if weighed:
            assert plays_only.last_worlds < plain.last_worlds
        else:
            assert moves[0] == moves[1]
            assert (plays_only.last_worlds, plays_only.last_work) == (
                plain.last_worlds,
                plain.last_work,
            )


def whist_bids_and_plays(
    seed: int, bids: int, plays: int
) -> tuple[list[GameState], list[GameState]]:
    """Bids and card plays of more than two cards from random four-seat Whist games."""
    positions = list(random_positions("whist", 4, {}, seed=seed, count=300))
    bid_states = [state for state in positions if state.phase == "bid"][:bids]
    play_states = [
        state
        for state in positions
        if state.phase == "play" and len(state.legal_actions(state.to_act()[0])) > 2
    ][:plays]
    assert (len(bid_states), len(play_states)) == (bids, plays)
    return bid_states, play_states


def test_a_contract_margin_keeps_the_rule_based_bid_unless_another_is_clearly_better() -> None:
    """With a margin only a certain difference could clear, every bid is the rule-based one;
    without one the search bids otherwise at some positions. Card plays are not held to it."""
    bids, plays = whist_bids_and_plays(seed=5, bids=12, plays=12)
    departed = 0
    for state in bids:
        seat = state.to_act()[0]
        observation = state.observation(seat)
        held = SearchStrategy(worlds=30, contract_margin_z=50.0)
        free = SearchStrategy(worlds=30)
        rules_bid = format_action(rules_action(state, seat))
        assert held.choose(observation, random.Random(1)) == rules_bid
        departed += free.choose(observation, random.Random(1)) != rules_bid
    assert departed > 0
    for state in plays:
        observation = state.observation(state.to_act()[0])
        held = SearchStrategy(worlds=30, contract_margin_z=50.0)
        free = SearchStrategy(worlds=30)
        assert held.choose(observation, random.Random(2)) == free.choose(
            observation, random.Random(2)
        )
    with pytest.raises(ValueError):
        SearchStrategy(contract_margin_z=-1.0)


def test_counts_named_on_a_command_line_are_whole_numbers() -> None:
    """``hard:set_candidates=10,world_candidates=2`` reads its numbers as floats: the search
    takes whole ones as counts (a Hearts pass among ten candidates, two deals drawn for each
    one kept) and refuses the rest."""
    name, own = parse_player("hard:budget_ms=2,set_candidates=10,world_candidates=2")
    strategy, options = strategy_and_options(name, **own)
    player = strategy_by_name(strategy, **options)
    assert isinstance(player, SearchStrategy)
    assert (player.set_candidates, player.world_candidates) == (10, 2)
    hearts = next(
        state
        for state in random_positions("hearts", 4, {"quick": True}, seed=2, count=50)
        if state.phase == "pass"
    )
    seat = hearts.to_act()[0]
    action = player.choose(hearts.observation(seat), random.Random(1))
    assert hearts.why_illegal(seat, parse_action(action)) is None
    for refused in ({"set_candidates": 2.5}, {"set_candidates": 0}, {"world_candidates": 1}):
        with pytest.raises(ValueError):
            SearchStrategy(**refused)  # type: ignore[arg-type]


def test_fewer_deals_drawn_for_each_world_kept_cost_less_and_buy_more_worlds() -> None:
    """Weighing with two candidate deals a world, not four, charges two draws and two readings
    of the others' plays: more worlds fit the same budget."""
    whist = a_choice_of_cards("whist", {}, tricks=2)
    observation = whist.observation(whist.to_act()[0])
    four = SearchStrategy(budget_ms=5, weigh_worlds=True)
    two = SearchStrategy(budget_ms=5, weigh_worlds=True, world_candidates=2)
    for player in (four, two):
        player.choose(observation, random.Random(3))
    assert two.last_worlds > four.last_worlds


def test_worlds_weighed_by_importance_cost_one_draw_and_buy_more_worlds() -> None:
    """``importance``: every world drawn is kept, its likelihood its weight, so a world costs
    one draw and one reading of the others' plays: more fit the budget than keeping one world
    of two. The weights' power is above 0 and at most 1."""
    whist = a_choice_of_cards("whist", {}, tricks=2)
    observation = whist.observation(whist.to_act()[0])
    two = SearchStrategy(budget_ms=5, weigh_worlds=True, world_candidates=2)
    weighed = SearchStrategy(budget_ms=5, weigh_worlds=True, importance=True)
    for player in (two, weighed):
        player.choose(observation, random.Random(3))
    assert weighed.last_worlds > two.last_worlds
    for power in (0.0, 1.5):
        with pytest.raises(ValueError):
            SearchStrategy(importance_power=power)


def test_bids_are_weighed_with_the_contract_playout_and_cards_with_the_playout() -> None:
    """``contract_playout``: a bid is chosen as a search playing that policy out would choose
    it, a card as the search's own playout would; an unknown policy is refused."""
    bids, plays = whist_bids_and_plays(seed=6, bids=12, plays=8)

    def choices(states: list[GameState], **options: Any) -> list[str]:
        return [
            SearchStrategy(worlds=12, **options).choose(
                state.observation(state.to_act()[0]), random.Random(5)
            )
            for state in states
        ]

    mixed = {"playout": "keen", "contract_playout": "random"}
    assert choices(bids, **mixed) == choices(bids, playout="random")
    assert choices(bids, **mixed) != choices(bids, playout="keen")
    assert choices(plays, **mixed) == choices(plays, playout="keen")
    with pytest.raises(ValueError):
        SearchStrategy(contract_playout="psychic")


def test_deals_drawn_for_a_world_kept_may_be_given_by_game() -> None:
    """Hard keeps one world of two drawn in Whist and of four elsewhere: its Whist move is the
    one a search told two for every game makes, at the same cost."""
    name, options = strategy_and_options("hard", budget_ms=5)
    hard = strategy_by_name(name, **options)
    assert isinstance(hard, SearchStrategy)
    assert [hard.candidates_per_world(game) for game in ("whist", "358", "belote")] == [2, 4, 4]
    two_everywhere = strategy_by_name(name, **{**options, "world_candidates": 2})
    whist = a_choice_of_cards("whist", {}, tricks=2)
    observation = whist.observation(whist.to_act()[0])
    for player in (hard, two_everywhere):
        player.choose(observation, random.Random(3))
    assert isinstance(two_everywhere, SearchStrategy)
    assert (hard.last_worlds, hard.last_work) == (
        two_everywhere.last_worlds,
        two_everywhere.last_work,
    )
    with pytest.raises(ValueError):
        SearchStrategy(world_candidates={"whist": 1})


#: A hand whose clubs, all high, can go at once: a pass no single swap of the rule's reaches.
HIGH_HAND = "AS KS QS AH KH QH JH 10H AC KC QC AD KD"


def test_pass_alternatives_join_the_candidates_once_each_in_the_games_named() -> None:
    state = hearts_deal({0: "QS 3S 4S 2C 3C 4C 5C 6C 2D 3D AH KH 7H"})

    def candidates(alternatives: bool | tuple[str, ...]) -> list[Action]:
        search = SearchStrategy(budget_ms=5, set_candidates=31, set_alternatives=alternatives)
        return search._set_candidates(state, 0, random.Random(1), "hearts")

    plain, wide = candidates(False), candidates(True)
    assert plain[0] == wide[0] == rules_action(state, 0)
    assert len(plain) == 31  # the rule's pass and its 30 one-card variants
    assert wide[1:5] == pass_alternatives(state, 0)
    # "7H KH AH" is also the rule's pass with the queen swapped for the 7: weighed once.
    assert len(wide) == len(set(wide)) == 34
    assert set(wide) == set(plain) | set(wide[1:5])
    assert candidates(("whist",)) == plain


def test_with_pass_alternatives_the_search_can_choose_a_pass_far_from_the_rules() -> None:
    state = hearts_deal({0: HIGH_HAND})
    rule = set(rules_action(state, 0).cards)
    chosen = {}
    for alternatives in (False, True):
        search = SearchStrategy(
            worlds=40, playout="keen", plan_game=True, set_alternatives=alternatives
        )
        chosen[alternatives] = parse_action(search.choose(state.observation(0), random.Random(1)))
    assert len(set(chosen[False].cards) & rule) >= 2  # the rule's pass or one card from it
    assert chosen[True] in pass_alternatives(state, 0)
    assert len(set(chosen[True].cards) & rule) <= 1
