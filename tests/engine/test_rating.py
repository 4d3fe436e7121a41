"""Rating formulas against RULES.md's worked examples and edges."""

import pytest

from cardtable.engine.rating import (
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


def test_leaver_deduction_scales_with_progress() -> None:
    assert leaver_deduction(4, 0.5) == 10
    changes = rating_changes("whist", [120, 90, 75, 60], [1500] * 4, left_at={3: 0.5})
    assert changes == pytest.approx([20, 0, -8, -30])


def test_whist_everyone_else_left() -> None:
    assert whist_everyone_left_changes(4, 1, [0, 2]) == [-15, 20, -15, 0]


def test_unknown_game_has_no_rule() -> None:
    with pytest.raises(ValueError):
        rating_changes("poker", [1, 2], [1500, 1500])
