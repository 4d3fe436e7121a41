"""Rating formulas against docs/rules.md's worked examples and edges."""

import pytest

from cardtable.engine.rating import (
    INITIAL_RATING,
    expected_score,
    leaver_deduction,
    level_adjusted_changes,
    place_formula_changes,
    rating_changes,
    whist_everyone_left_changes,
)


def test_whist_rating_worked_example() -> None:
    assert place_formula_changes([120, 90, 75, 60]) == pytest.approx([20, 0, -8, -20])


def test_whist_rating_all_equal_gives_zero() -> None:
    assert place_formula_changes([40, 40, 40]) == [0, 0, 0]


def test_whist_rating_tie_for_first_shares_place_values() -> None:
    # places 1 and 2 are worth +20 and 4n + 8n(120-120)/60 = 16: each gets 18
    assert place_formula_changes([120, 120, 75, 60]) == pytest.approx([18, 18, -8, -20])


def test_whist_rating_tie_for_last_shares_place_values() -> None:
    # place 3 is worth 16 + 32 × (60 - 120) / 60 = -16 and place 4 -20: each gets -18
    assert place_formula_changes([120, 90, 60, 60]) == pytest.approx([20, 0, -18, -18])


def test_358_uses_place_formula_with_three_players() -> None:
    assert rating_changes("358", [10, 0, -10], [1500] * 3) == pytest.approx([15, 0, -15])
    # 4n + 8n × (4 - 10) / 20 = 12 - 7.2
    assert rating_changes("358", [10, 4, -10], [1500] * 3) == pytest.approx([15, 4.8, -15])


def test_hearts_rating_worked_example() -> None:
    changes = rating_changes("hearts", [102, 64, 64, 89], [1500] * 4)
    assert changes == pytest.approx([-25, 20, 20, -15])


def test_level_adjustment_lower_rated_winner_gains_more_and_sum_is_zero() -> None:
    base = [20.0, -20.0]
    underdog = level_adjusted_changes(base, [1400, 1600])
    favourite = level_adjusted_changes(base, [1600, 1400])
    assert underdog[0] > 20 > favourite[0] > 0
    assert sum(underdog) == pytest.approx(0)
    assert sum(favourite) == pytest.approx(0)
    # pair of two: transfer (20 - -20) / 2 = 20 weighted by 2(1 - E)
    assert underdog[0] == pytest.approx(20 * 2 * (1 - expected_score(1400, 1600)))


def test_belote_rating_base_and_adjustment() -> None:
    assert rating_changes("belote", [510, 320, 510, 320], [1500] * 4) == pytest.approx(
        [20, -20, 20, -20]
    )
    adjusted = rating_changes("belote", [510, 320, 510, 320], [1400, 1600, 1400, 1600])
    assert adjusted[0] == adjusted[2] > 20
    assert sum(adjusted) == pytest.approx(0)


def test_belote_level_adjustment_exact_values() -> None:
    changes = rating_changes("belote", [510, 320, 510, 320], [1400, 1600, 1400, 1600])
    # Each winner meets each loser once (its partner gives a zero transfer): (20 - -20) / 4 = 10,
    # weighted by 2(1 - E) with E the 1400-rated winner's expected score against 1600.
    winner_expected = 1 / (1 + 10 ** ((1600 - 1400) / 400))
    per_pair = (20 - -20) / 4 * 2 * (1 - winner_expected)
    assert changes == pytest.approx([2 * per_pair, -2 * per_pair, 2 * per_pair, -2 * per_pair])
    assert changes == pytest.approx([30.39, -30.39, 30.39, -30.39], abs=0.01)
    assert sum(changes) == pytest.approx(0)


def test_hearts_level_adjustment_exact_values() -> None:
    # Base values for totals 102, 64, 64, 89: seat 0 last -25, seats 1 and 2 share the first two
    # places (45 - 5) / 2 = 20, seat 3 third -15.
    changes = rating_changes("hearts", [102, 64, 64, 89], [1600, 1400, 1500, 1500])

    def weight(winner_rating: float, loser_rating: float) -> float:
        return 2 * (1 - 1 / (1 + 10 ** ((loser_rating - winner_rating) / 400)))

    seat_1_over_0 = (20 - -25) / 4 * weight(1400, 1600)
    seat_2_over_0 = (20 - -25) / 4 * weight(1500, 1600)
    seat_3_over_0 = (-15 - -25) / 4 * weight(1500, 1600)
    seat_1_over_3 = (20 - -15) / 4 * weight(1400, 1500)
    seat_2_over_3 = (20 - -15) / 4 * weight(1500, 1500)
    assert changes == pytest.approx(
        [
            -seat_1_over_0 - seat_2_over_0 - seat_3_over_0,
            seat_1_over_0 + seat_1_over_3,
            seat_2_over_0 + seat_2_over_3,
            seat_3_over_0 - seat_1_over_3 - seat_2_over_3,
        ]
    )
    assert changes == pytest.approx([-34.70, 28.30, 23.15, -16.75], abs=0.01)
    assert sum(changes) == pytest.approx(0)


def test_ratings_start_at_1500() -> None:
    assert INITIAL_RATING == 1500


def test_leaver_deduction_scales_with_progress() -> None:
    assert leaver_deduction(4, 0.5) == 10
    changes = rating_changes("whist", [120, 90, 75, 60], [1500] * 4, left_at={3: 0.5})
    assert changes == pytest.approx([20, 0, -8, -30])


def test_whist_everyone_else_left() -> None:
    assert whist_everyone_left_changes(4, 1, [0, 2]) == [-15, 20, -15, 0]


def test_whist_everyone_else_left_scales_with_the_table() -> None:
    assert whist_everyone_left_changes(3, 2, [0, 1]) == [-15, -15, 15]
    # seats 2 and 5 were computer players from the start
    assert whist_everyone_left_changes(6, 0, [1, 3, 4]) == [30, -15, 0, -15, -15, 0]


def test_unknown_game_has_no_rule() -> None:
    with pytest.raises(ValueError):
        rating_changes("poker", [1, 2], [1500, 1500])
