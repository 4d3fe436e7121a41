"""Rating changes at the end of a game, as docs/rules.md#ratings sets them out: pure arithmetic.

Every formula is written out here and nowhere else; the scoring service only stores results.
Ratings start at 1500 per player per game (:data:`INITIAL_RATING`).

Whist and 3-5-8 (the place formula), for n players with final totals s and
``max``/``min`` over the table::

    first place:   +5n
    last place:    -5n
    in between:    4n + 8n × (s - max) / (max - min)        (lies in -4n .. +4n)
    max == min:    0 for everyone

Hearts: places 1 to 4 are worth +45, -5, -15, -25. Belote: winners +20 each, losers -20 each.
Both are then adjusted by rating level (docs/rules.md#adjustment-by-rating-level), an Elo-style
weighting of the same zero-sum base values::

    for each pair i, j:     i receives (b_i - b_j) / n            (j the opposite)
    pair winner w (higher b), loser l:
        E = 1 / (1 + 10 ** ((R_l - R_w) / 400))                  (Elo expected score)
        the pair's transfer is multiplied by 2 × (1 - E)

With equal ratings E = 1/2, the factor is 1, and the changes are exactly the base values; a
lower-rated winner gains more; the changes still sum to 0.

Ties in a ranking share places: tied players split the sum of the values of the places they
occupy evenly. A player who left counts as disconnected: their change is what their seat
earned minus 5 × n × (share of the game completed when they left). In Whist, when every other
person has left, the game ends at once: the remaining person gets +5n and each leaver -15.

>>> place_formula_changes([120, 90, 75, 60])
[20.0, 0.0, -8.0, -20.0]
>>> level_adjusted_changes([-25, 20, 20, -15], [1500, 1500, 1500, 1500])
[-25.0, 20.0, 20.0, -15.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cardtable.engine.ranking import share_place_values, tie_groups

INITIAL_RATING = 1500.0
HEARTS_PLACE_VALUES = (45.0, -5.0, -15.0, -25.0)
BELOTE_WIN = 20.0
WHIST_LEAVER_PENALTY = -15.0


def place_formula_changes(totals: Sequence[int]) -> list[float]:
    """Whist's and 3-5-8's place formula (highest total best), ties sharing their places."""
    players = len(totals)
    high, low = max(totals), min(totals)
    if high == low:
        return [0.0] * players
    ordered = sorted(totals, reverse=True)

    def value_of_place(position: int) -> float:
        if position == 0:
            return 5.0 * players
        if position == players - 1:
            return -5.0 * players
        total = ordered[position]
        return 4.0 * players + 8.0 * players * (total - high) / (high - low)

    place_values = [value_of_place(position) for position in range(players)]
    return share_place_values(totals, place_values)


def hearts_base_changes(totals: Sequence[int]) -> list[float]:
    """Hearts' place values (+45, -5, -15, -25; lowest total best), ties sharing."""
    return share_place_values(totals, HEARTS_PLACE_VALUES, lower_is_better=True)


def team_base_changes(totals: Sequence[int]) -> list[float]:
    """Belote: +20 for each seat of the winning team, -20 for each loser.

    ``totals`` are per seat (both partners carry the team's total); the game never ends on a
    tie, so there is always exactly one winning group.
    """
    groups = tie_groups(totals)
    if len(groups) != 2:
        raise ValueError("a team game ends with one winning and one losing team")
    winners = set(groups[0])
    return [BELOTE_WIN if seat in winners else -BELOTE_WIN for seat in range(len(totals))]


def expected_score(winner_rating: float, loser_rating: float) -> float:
    """Elo's expected score of the pair's winner: 1 / (1 + 10^((R_l - R_w) / 400))."""
    exponent = (loser_rating - winner_rating) / 400.0
    return 1.0 / (1.0 + math.pow(10.0, exponent))


def level_adjusted_changes(base: Sequence[float], ratings: Sequence[float]) -> list[float]:
    """Spread zero-sum ``base`` values over pairs and weight each pair by the rating gap."""
    players = len(base)
    changes = [0.0] * players
    for first in range(players):
        for second in range(first + 1, players):
            transfer = (base[first] - base[second]) / players
            if transfer == 0:
                continue
            winner, loser = (first, second) if transfer > 0 else (second, first)
            weight = 2.0 * (1.0 - expected_score(ratings[winner], ratings[loser]))
            changes[first] += transfer * weight
            changes[second] -= transfer * weight
    return changes


def leaver_deduction(players: int, progress_when_left: float) -> float:
    """What a disconnected player loses: 5 × n × the share of the game completed."""
    return 5.0 * players * progress_when_left


def rating_changes(
    game: str,
    totals: Sequence[int],
    ratings: Sequence[float],
    left_at: Mapping[int, float] | None = None,
) -> list[float]:
    """Each seat's rating change at the end of ``game``.

    ``ratings`` are the seats' ratings before the game; ``left_at`` maps each seat counted as
    disconnected to the share of the game completed when they left.
    """
    if game in ("whist", "358"):
        changes = place_formula_changes(totals)
    elif game == "hearts":
        changes = level_adjusted_changes(hearts_base_changes(totals), ratings)
    elif game == "belote":
        changes = level_adjusted_changes(team_base_changes(totals), ratings)
    else:
        raise ValueError(f"no rating rule for game {game!r}")
    for seat, progress in (left_at or {}).items():
        changes[seat] -= leaver_deduction(len(totals), progress)
    return changes


def whist_everyone_left_changes(
    players: int, remaining_seat: int, leavers: Sequence[int]
) -> list[float]:
    """Whist's early end: the one person left gets +5n, each player who left -15.

    Seats that were computer players from the start get nothing. This replaces the place
    formula and the leaver deduction (our reading of the seed's "if one of the players reach
    to zero").
    """
    changes = [0.0] * players
    changes[remaining_seat] = 5.0 * players
    for seat in leavers:
        changes[seat] = WHIST_LEAVER_PENALTY
    return changes
