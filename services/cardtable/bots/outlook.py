"""What a deal's end is worth beyond its score: the game still to play, and winning it.

The search plays each candidate to the end of the deal and scores it by the deal (its score
against the others'). A deal's score misses what it does to the rest of the game, which the
strongest players count:

- **Winning.** A deal that ends the game (Hearts past 100, Belote past 501, the last deal of
  Whist or 3-5-8) turns points into places: it is worth :data:`WIN_VALUE` points more to the
  seat that wins, so the search steers to the 100 or 501 line when ahead and away from it when
  behind.
- **Whist streaks.** Five exact bids in a row earn +10 and five misses -10; a run of 3 is worth
  part of that already. A seat's runs are worth ``±10 × p^(deals still needed)`` when enough
  counted deals are left (:func:`streak_value`, ``p`` the chance of an exact bid or of a miss).
- **3-5-8 contracts.** Each declarer must play each of the six contracts once, so playing one
  now spends it: a contract still to play is worth what it scores on average on a hand that
  did not choose it (:data:`CONTRACT_VALUE`, measured by :func:`measure_contract_values`), and
  choosing ``MT`` on a middling hand now leaves a poorer contract for a worse hand later.
  Valued as a set (:mod:`cardtable.bots.contract_sets`, the search's ``contract_sets``), the
  contracts left are worth what a declarer choosing among them makes of them.

:func:`outlook` is oriented as the deal's advantage is (the seat's value minus the others'
mean, higher is better), in the game's points, so the search adds the two.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Sequence

from cardtable.bots.contract_sets import contracts_left_worth
from cardtable.engine.game import GameState
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACTS,
    MINIMUM_TRICKS,
    NO_TRUMP,
    ThreeFiveEightState,
)
from cardtable.engine.games.whist.rules import STREAK_BONUS, STREAK_LENGTH, WhistState
from cardtable.engine.ranking import win_shares

#: What winning the game is worth, in the game's points, beside the score it ends with: about
#: the spread of one deal's advantage, so a win outweighs a small loss of points in the deal
#: that decides it, never a game's worth.
WIN_VALUE = {"whist": 10.0, "358": 3.0, "belote": 60.0, "hearts": 8.0}
#: Chance that a Whist bid (of more than one card) is exact: 0.49 for rule-based players over
#: 4,530 bids of 60 games of 3 to 6 players.
EXACT_CHANCE = 0.5
#: A 3-5-8 declarer's mean deal score for each kind of contract played on a random hand (the
#: rule-based players at every seat), measured by :func:`measure_contract_values`.
CONTRACT_VALUE = {"trump": -1.41, NO_TRUMP: -1.59, MINIMUM_TRICKS: -0.7}


def advantage_over_others(values: Sequence[float], seat: int) -> float:
    """The seat's value minus the mean of the others'.

    >>> advantage_over_others([3.0, 0.0, 0.0, 3.0], 0)
    2.0
    """
    others = [value for other, value in enumerate(values) if other != seat]
    return values[seat] - sum(others) / len(others)


def oriented(scores: Sequence[float], lower_is_better: bool) -> list[float]:
    """Deal scores turned so that higher is better for every seat (Hearts counts points
    against).

    >>> oriented([13, 0], lower_is_better=True), oriented([8, -1], lower_is_better=False)
    ([-13, 0], [8, -1])
    """
    sign = -1 if lower_is_better else 1
    return [sign * score for score in scores]


def streak_value(exact_run: int, miss_run: int, counted_left: int) -> float:
    """What a seat's current Whist runs are worth in the deals still to count.

    >>> streak_value(4, 0, 3), streak_value(0, 4, 3), streak_value(3, 0, 1)
    (5.0, -5.0, 0.0)
    """
    value = 0.0
    exact_needed = STREAK_LENGTH - exact_run
    if exact_run and exact_needed <= counted_left:
        value += STREAK_BONUS * EXACT_CHANCE**exact_needed
    miss_needed = STREAK_LENGTH - miss_run
    if miss_run and miss_needed <= counted_left:
        value -= STREAK_BONUS * (1 - EXACT_CHANCE) ** miss_needed
    return round(value, 6)


def whist_streaks(state: WhistState, seat: int) -> float:
    """The seat's runs against the others', valued over the counted deals still to play."""
    counted_left = state.counted_deals_left()
    values = [
        streak_value(exact, miss, counted_left)
        for exact, miss in zip(state.exact_runs, state.miss_runs, strict=True)
    ]
    return advantage_over_others(values, seat)


def contract_kind(contract: str) -> str:
    return contract if contract in (NO_TRUMP, MINIMUM_TRICKS) else "trump"


def forced_worth(contracts: Iterable[str]) -> float:
    """What ``contracts`` score together, each forced on a random hand (:data:`CONTRACT_VALUE`).

    >>> round(forced_worth(["S", "MT"]), 2)
    -2.11
    """
    return sum(CONTRACT_VALUE[contract_kind(contract)] for contract in contracts)


def contracts_left_value(state: ThreeFiveEightState, seat: int, by_sets: bool = False) -> float:
    """The seat's contracts still to play against the others', each at its mean value, or
    with ``by_sets`` each seat's as a whole (:mod:`cardtable.bots.contract_sets`)."""
    values = []
    for other in range(state.num_players):
        left = [contract for contract in CONTRACTS if contract not in state.used[other]]
        if by_sets:
            values.append(contracts_left_worth(left))
        else:
            values.append(forced_worth(left))
    return advantage_over_others(values, seat)


def outlook(state: GameState, seat: int, contract_sets: bool = False) -> float:
    """The seat's value beyond the deals' scores, right after a deal was scored; with
    ``contract_sets`` 3-5-8 contracts left count as sets (:func:`contracts_left_value`)."""
    value = 0.0
    if state.is_over():
        places = state.places()
        assert places is not None
        shares = win_shares(places, state.spec.teams)
        value += WIN_VALUE.get(state.spec.name, 0.0) * advantage_over_others(shares, seat)
    elif isinstance(state, WhistState):
        value += whist_streaks(state, seat)
    elif isinstance(state, ThreeFiveEightState):
        value += contracts_left_value(state, seat, contract_sets)
    return value


def measure_contract_values(deals: int, rng: random.Random) -> dict[str, float]:
    """Fit :data:`CONTRACT_VALUE` again: the declarer's mean deal score for each kind of
    contract forced on random hands, every seat played by the rule-based player."""
    from cardtable.bots.random_play import shuffled_deck
    from cardtable.bots.rules import rules_action
    from cardtable.engine.games.three_five_eight.rules import (
        CONTRACT_ACTIONS,
        CONTRACT_PHASE,
        THREE_FIVE_EIGHT,
    )

    scores: dict[str, list[float]] = {"trump": [], NO_TRUMP: [], MINIMUM_TRICKS: []}
    for number in range(deals):
        contract = CONTRACTS[number % len(CONTRACTS)]
        state = THREE_FIVE_EIGHT.new_game(3, None, rng.randrange(3))
        assert isinstance(state, ThreeFiveEightState)
        state.deal(shuffled_deck(state, rng))
        while not state.deal_scores:
            seat = state.to_act()[0]
            forced = state.phase == CONTRACT_PHASE
            state.apply(seat, CONTRACT_ACTIONS[contract] if forced else rules_action(state, seat))
        scores[contract_kind(contract)].append(float(state.deal_scores[-1][state.declarer]))
    return {kind: round(statistics.fmean(values), 2) for kind, values in scores.items()}
