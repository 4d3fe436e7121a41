"""Final places with ties: tied players share the places they occupy.

The rule: docs/rules.md#final-places-and-ties.

>>> places_from_totals((102, 64, 64, 89), lower_is_better=True)
(4, 1, 1, 3)
>>> tie_groups((102, 64, 64, 89), lower_is_better=True)
[[1, 2], [3], [0]]
>>> win_shares((4, 1, 1, 3)), win_shares((1, 2, 1, 2), teams=((0, 2), (1, 3)))
((0.0, 0.5, 0.5, 0.0), (1.0, 0.0, 1.0, 0.0))
"""

from __future__ import annotations

from collections.abc import Sequence


def tie_groups(totals: Sequence[int], *, lower_is_better: bool = False) -> list[list[int]]:
    """Seats grouped by equal total, best group first; seats within a group in seat order."""
    ordered = sorted(set(totals), reverse=not lower_is_better)
    return [[seat for seat, total in enumerate(totals) if total == value] for value in ordered]


def places_from_totals(totals: Sequence[int], *, lower_is_better: bool = False) -> tuple[int, ...]:
    """Each seat's place (1 = best); a tied group takes the first of the places it occupies."""
    places = [0] * len(totals)
    next_place = 1
    for group in tie_groups(totals, lower_is_better=lower_is_better):
        for seat in group:
            places[seat] = next_place
        next_place += len(group)
    return tuple(places)


def share_place_values(
    totals: Sequence[int], place_values: Sequence[float], *, lower_is_better: bool = False
) -> list[float]:
    """Each seat's share of ``place_values`` (the value of place 1, 2, ...).

    Tied seats split the sum of the values of the places they occupy evenly: with Hearts'
    +45, -5, -15, -25 two seats tied first get (45 - 5) / 2 = 20 each.
    """
    shares = [0.0] * len(totals)
    first_place = 0
    for group in tie_groups(totals, lower_is_better=lower_is_better):
        occupied = place_values[first_place : first_place + len(group)]
        share = sum(occupied) / len(group)
        for seat in group:
            shares[seat] = share
        first_place += len(group)
    return shares


def win_shares(places: Sequence[int], teams: Sequence[Sequence[int]] = ()) -> tuple[float, ...]:
    """Each seat's share of the win: winners tied for first split it, partners counting as
    one winner (a team wins as a pair, each partner with the whole share)."""
    team_of = {seat: index for index, team in enumerate(teams) for seat in team}
    winners = len({team_of.get(seat, -1 - seat) for seat, place in enumerate(places) if place == 1})
    return tuple(1.0 / winners if place == 1 else 0.0 for place in places)
