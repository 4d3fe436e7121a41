"""The tournament: duplicate boards, oriented advantages, and the command line."""

from __future__ import annotations

import contextlib
import doctest
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest

from cardtable.bots.search import WORK_UNITS_PER_MS, SearchStrategy
from cardtable.cli.main import main
from cardtable_tools import deal_breakdown, tournament
from cardtable_tools.commands import tournament as tournament_command
from cardtable_tools.commands.tournament import tournament_estimate
from cardtable_tools.tournament import (
    _line_up,
    boards_to_clear,
    confidence_interval,
    estimate_game,
    game_advantages,
    play_board,
    run_tournament,
    strength_ladder,
    win_shares,
)

#: The ``cardtable`` command run as a process of its own, as an operator runs it.
CARDTABLE = (
    sys.executable,
    "-c",
    "import sys; from cardtable.cli.main import main; sys.exit(main(sys.argv[1:]))",
)


def test_short_tournament_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "tournament",
            "--game", "hearts",
            "--seats", "search,rules,random,random",
            "--games", "4",
            "--seed", "1",
            "--budget-ms", "3",
            "--option", "quick=true",
            "--json",
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4 and report["seconds"] >= 0
    for name in ("search", "rules", "random"):
        entry = report[name]
        assert set(entry) >= {"mean_score", "win_rate", "ci95"}
        low, high = entry["ci95"]
        assert low <= entry["advantage"] <= high


def test_a_level_plays_at_the_budget_given_it_as_run_tournament_would(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--level-budget hard=2`` is ``strategy_options={"hard": {"budget_ms": 2}}``: the
    command line reproduces a run made through the function (hard at 50 against 200 ms)."""
    args = ["tournament", "--game", "hearts", "--seats", "hard,search,hard,search",
            "--games", "4", "--seed", "2", "--option", "quick=true", "--workers", "1",
            "--budget-ms", "3", "--level-budget", "hard=2", "--json"]  # fmt: skip
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    expected = run_tournament(
        "hearts",
        ["hard", "search", "hard", "search"],
        4,
        seed=2,
        options={"quick": "true"},
        strategy_options={"hard": {"budget_ms": 2.0}, "search": {"budget_ms": 3.0}},
    )
    for name in ("hard", "search"):
        assert report[name] == expected[name]
    for refused in ("easy=5", "hard=0", "hard=fast", "search=5"):
        assert main([*args[:-3], "--level-budget", refused]) == 2
        assert "--level-budget" in capsys.readouterr().err


def test_a_variant_seat_plays_its_base_with_the_options_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--variant plain=hard:playout=rules`` seats hard with the plain playout beside hard,
    at hard's seated budget: the run a function call with those options makes."""
    args = ["tournament", "--game", "hearts", "--seats", "hard,plain,hard,plain",
            "--games", "4", "--seed", "3", "--option", "quick=true", "--workers", "1",
            "--level-budget", "hard=2", "--variant", "plain=hard:playout=rules",
            "--json"]  # fmt: skip
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    expected = run_tournament(
        "hearts",
        ["hard", "plain", "hard", "plain"],
        4,
        seed=3,
        options={"quick": "true"},
        strategy_options={
            "hard": {"budget_ms": 2.0},
            "plain": {"budget_ms": 2.0, "playout": "rules", "variant_of": "hard"},
        },
    )
    assert report["ladder"] == expected["ladder"]
    for name in ("hard", "plain"):
        assert report[name] == expected[name]
    variant = {"plain": {"playout": "rules", "variant_of": "hard"}}
    strategies = _line_up("hearts", ["hard", "plain", "hard", "plain"], None, variant)[2]
    plain = strategies["plain"]
    assert isinstance(plain, SearchStrategy)
    assert (plain.playout, plain.adaptive, plain.budget_ms) == ("rules", True, 100.0)
    for refused in ("hard=hard:playout=rules", "plain=nobody", "plain"):
        assert main([*args[:-3], "--variant", refused]) == 2
        assert "--variant" in capsys.readouterr().err


def test_table_output_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--game", "belote", "--seats", "rules,random,rules,random",
                 "--games", "4"]) == 0  # fmt: skip
    assert "rules" in capsys.readouterr().out
    assert main(["tournament", "--game", "358", "--seats", "rules,rules,rules"]) == 2
    # Belote partners share a score: a team of two levels would blur both.
    assert main(["tournament", "--game", "belote", "--seats", "hard,normal,easy,easy"]) == 2
    assert "e.g. hard,normal,hard,normal" in " ".join(capsys.readouterr().err.split())
    assert main(["tournament", "--game", "358", "--seats", "rules,random"]) == 2


def test_every_strategy_plays_every_seat_on_the_same_cards() -> None:
    report = run_tournament("whist", ["rules", "random", "random"], 2, seed=3)
    assert report["games"] == 3 and report["boards"] == 1
    # Two strategies: each one's advantage is the other's loss.
    assert report["rules"]["advantage"] == pytest.approx(-report["random"]["advantage"])


def test_each_board_is_reported_in_order_and_pairs_with_the_same_seeds_boards() -> None:
    """A longer run of one seed plays the shorter run's boards first, on the same cards, so
    two runs of a seed compare board by board."""
    seats = ["rules", "random", "random"]
    long_run = run_tournament("whist", seats, 9, seed=3)
    short_run = run_tournament("whist", seats, 3, seed=3)
    boards = long_run["rules"]["board_advantages"]
    assert len(boards) == long_run["boards"] == 3
    assert statistics.fmean(boards) == pytest.approx(long_run["rules"]["advantage"], abs=1e-3)
    assert short_run["rules"]["board_advantages"] == boards[:1]
    assert len(set(boards)) == 3  # each board its own cards


def test_a_rotation_repeating_a_seating_gives_way_to_a_new_board() -> None:
    """``a,b,a,b`` turned by two seats ``a`` on the same hands again: a board plays the two
    seatings, the same games as the first two of every rotation, and a tournament of as many
    games deals twice as many boards (the ``--every-rotation`` tournament: the old one)."""
    seats = ["rules", "random", "rules", "random"]
    options = {"quick": "true"}
    distinct = play_board("hearts", seats, 4, 0, options)
    every = play_board("hearts", seats, 4, 0, options, every_rotation=True)
    assert [game.seating for game in every] == [tuple(seats), tuple(seats[1:] + seats[:1])] * 2
    assert distinct == every[:2]
    for every_rotation, boards in ((False, 4), (True, 2)):
        report = run_tournament("hearts", seats, 8, 4, options=options,
                                every_rotation=every_rotation)  # fmt: skip
        assert (report["games"], report["boards"]) == (8, boards)
    three = play_board("358", ["rules", "random", "random"], 4, 0)
    assert len(three) == 3  # every rotation of a,b,b is a seating of its own


def test_advantage_is_oriented_and_wins_are_shared() -> None:
    hearts = game_advantages(["a", "b", "b", "b"], [10, 20, 30, 40], lower_is_better=True)
    assert hearts == {"a": pytest.approx(20.0), "b": pytest.approx(-20.0)}
    assert win_shares(["a", "b", "a", "b"], [1, 2, 1, 2], ((0, 2), (1, 3))) == {"a": 1.0, "b": 0.0}
    assert win_shares(["a", "b", "b"], [1, 1, 3]) == {"a": 0.5, "b": 0.25}
    low, high = confidence_interval([1.0, 2.0, 3.0])
    assert low < 2.0 < high and high - 2.0 == pytest.approx(4.303 * 1.0 / 3**0.5)


def test_games_to_clear_is_met_exactly_when_the_interval_clears_zero() -> None:
    """The estimate asks the report's own interval how many boards it needs: at the boards
    played it is met exactly when that interval is clear of zero, on either side."""
    rng = random.Random(4)
    seen = set()
    for _ in range(400):
        count = rng.randrange(2, 80)
        mean, spread = rng.uniform(-1.0, 1.0), rng.uniform(0.1, 3.0)
        values = [rng.gauss(mean, spread) for _ in range(count)]
        low, high = confidence_interval(values)
        needed = boards_to_clear(values)
        clear = low > 0 or high < 0
        assert needed is not None and (needed <= count) == clear
        seen.add((clear, count > 31))
    assert seen == {(True, False), (True, True), (False, False), (False, True)}
    report = run_tournament("whist", ["rules", "random", "random"], 6, seed=3)
    to_clear = report["rules"]["games_to_clear"]
    assert to_clear > 0 and to_clear % 3 == 0  # whole boards of three games
    assert boards_to_clear([1.0]) is None  # one board has no spread to go by


def test_the_estimate_comes_first_and_progress_is_told_without_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["tournament", "--game", "hearts", "--seats", "search,random,random,random",
            "--games", "4", "--budget-ms", "2", "--option", "quick=true"]  # fmt: skip
    assert main(argv) == 0
    shown = capsys.readouterr()
    estimate = shown.err.index("games/s: 4 games will take about")
    assert estimate < shown.err.index("tournament: 4/4 games in")
    assert "search" in shown.out and "games/s" not in shown.out  # the table alone on stdout


def test_the_estimate_counts_the_thinking_the_games_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search's thinking is most of a game's time; the estimate counts the budget at every
    move with a choice. The games' own thinking is the work their searches did (a budget is
    work, so it reads the same on any machine and under any load); the estimate must come near
    it, which an estimate that left the thinking out or counted it once a deal would not."""
    seats = ["search", "random", "random", "random"]
    budget = {"search": {"budget_ms": 20.0}}
    options = {"quick": "true"}
    estimate = estimate_game("hearts", seats, 5, options=options, strategy_options=budget)
    work = 0
    choose = SearchStrategy.choose

    def counted(self: SearchStrategy, observation: Mapping[str, Any], rng: random.Random) -> str:
        nonlocal work
        action = choose(self, observation, rng)
        work += self.last_work
        return action

    monkeypatch.setattr(SearchStrategy, "choose", counted)
    report = run_tournament("hearts", seats, 8, 5, options=options, strategy_options=budget)
    thought = work / (WORK_UNITS_PER_MS * 1000) / report["games"]
    assert 0.67 < estimate.thinking_seconds / thought < 1.5


def test_a_long_tournament_says_how_to_make_it_shorter() -> None:
    said = str(tournament_estimate(400, 18.0))
    assert said.startswith("about 0.056 games/s: 400 games will take about 2h00m")
    assert "--budget-ms" in said
    assert "--budget-ms" not in str(tournament_estimate(40, 1.5))


def test_a_pool_of_processes_gives_exactly_the_serial_result() -> None:
    """Boards spread over two processes, the search thinking to a work budget: the same
    report as one process playing them in turn, but for the time and the processes."""
    seats = ["search", "rules", "random", "random"]
    budget = {"search": {"budget_ms": 2.0}}
    options = {"quick": "true"}
    serial, pooled = (
        run_tournament("hearts", seats, 12, 7, options=options, strategy_options=budget,
                       workers=workers)
        for workers in (1, 2)
    )  # fmt: skip
    assert (serial["workers"], pooled["workers"]) == (1, 2)
    for report in (serial, pooled):
        del report["seconds"], report["workers"]
    assert pooled == serial


def test_the_ladder_is_a_table_and_on_request_a_chart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chart = tmp_path / "ladder.png"
    argv = ["tournament", "--game", "whist", "--seats", "random,rules,random", "--games", "6",
            "--workers", "2", "--chart", str(chart)]  # fmt: skip
    assert main(argv) == 0
    shown = capsys.readouterr()
    assert chart.read_bytes().startswith(b"\x89PNG") and str(chart) in shown.err
    rows = [[cell.strip() for cell in line.split("│")[1:3]] for line in shown.out.splitlines()]
    ranked = [row for row in rows if row and row[0] in ("1", "2")]
    assert "in 2 processes" in shown.out
    argv[-2:] = ["--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ladder"] == strength_ladder(report)
    assert ranked == [["1", report["ladder"][0]], ["2", report["ladder"][1]]]


def test_levels_take_seats_and_keep_their_own_budget() -> None:
    """The command's ``--budget-ms`` reaches the plain search only: a level is measured at the
    budget it plays at."""
    _, names, strategies = _line_up(
        "hearts",
        ["hard", "search", "normal", "easy"],
        {"quick": True},
        {"search": {"budget_ms": 3}},
    )
    assert names == ["hard", "search", "normal", "easy"]
    budgets = {
        name: strategy.budget_ms
        for name, strategy in strategies.items()
        if isinstance(strategy, SearchStrategy)
    }
    assert budgets == {"hard": 100.0, "search": 3.0, "normal": 20.0}


def test_a_small_ladder_of_levels() -> None:
    """The ladder command's shape, at budgets shrunk so that it takes a moment."""
    report = run_tournament(
        "hearts",
        ["hard", "normal", "easy", "easy"],
        4,
        seed=1,
        options={"quick": True},
        strategy_options={"hard": {"budget_ms": 2}, "normal": {"budget_ms": 1}},
    )
    assert report["games"] == 4 and sorted(report["ladder"]) == ["easy", "hard", "normal"]
    for name in ("hard", "normal", "easy"):
        low, high = report[name]["ci95"]
        assert low <= report[name]["advantage"] <= high


def test_levels_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "--game", "hearts", "--seats", "normal,easy,random,random",
            "--games", "4", "--budget-ms", "1", "--option", "quick=true", "--workers", "1",
            "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["ladder"]) == {"normal", "easy", "random"}


def test_the_workers_end_when_the_tournament_is_killed() -> None:
    """A pool's workers outlived a tournament stopped by ``kill``, playing on a core each."""
    command = [
        *CARDTABLE,
        "tournament", "--game", "hearts", "--seats", "search,rules,random,random",
        "--games", "40", "--seed", "1", "--budget-ms", "200", "--workers", "2", "--json",
    ]  # fmt: skip
    tournament = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[psutil.Process] = []
    try:
        parent = psutil.Process(tournament.pid)
        deadline = time.monotonic() + 60
        while len(workers) < 2:
            assert time.monotonic() < deadline, "the workers never started"
            workers = [
                child
                for child in parent.children()
                if "spawn_main" in " ".join(child.cmdline())
                and "tracker" in " ".join(child.cmdline())
            ]
            time.sleep(0.2)
        tournament.terminate()
        tournament.wait(10)
        _, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"workers still running after the tournament ended: {alive}"
    finally:
        tournament.kill()
        tournament.wait()
        for worker in workers:  # a failure here must not leave them running either
            with contextlib.suppress(psutil.NoSuchProcess):
                worker.kill()


def test_the_estimate_follows_how_fast_this_machine_does_the_searchs_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A budget is work sized for a quiet core: on a slower machine it takes longer, which the
    estimate reads from its own trial's searches (it was 2-5 times short on a slow one)."""
    seats = ["search", "random", "random", "random"]
    budget = {"search": {"budget_ms": 200.0}}
    options = {"quick": "true"}
    clocks: list[tournament.WorkClock] = []
    measured = tournament.WorkClock.quiet_core_ratio

    def ratio_of(speed: float | None) -> Callable[[tournament.WorkClock], float]:
        def ratio(clock: tournament.WorkClock) -> float:
            clocks.append(clock)
            return measured(clock) if speed is None else speed

        return ratio

    def estimate(speed: float | None) -> float:
        monkeypatch.setattr(tournament.WorkClock, "quiet_core_ratio", ratio_of(speed))
        return estimate_game("hearts", seats, 5, options=options, strategy_options=budget).seconds

    estimate(None)
    trial = clocks[-1]
    assert trial.units >= tournament.MIN_TIMED_UNITS and trial.seconds > 0
    assert measured(trial) == pytest.approx(
        tournament.WORK_UNITS_PER_MS * 1000 * trial.seconds / trial.units
    )
    # the thinking, most of a game, scales with the machine's speed
    assert estimate(100.0) > 20 * estimate(1.0)


@pytest.mark.parametrize(
    "module", [tournament_command, tournament, deal_breakdown], ids=lambda m: m.__name__
)
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0


#: Deals a game has, by cards each: Whist's grow to eight and back (four players), the others
#: deal the same hand every time.
@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [
        ("whist", ["rules", "random", "rules", "random"], {}),
        ("358", ["rules", "random", "random"], {}),
        ("belote", ["rules", "random", "rules", "random"], {}),
        ("hearts", ["rules", "random", "random", "rules"], {"quick": "true"}),
    ],
)
def test_the_deal_breakdown_adds_up_to_the_games(
    game: str, seats: list[str], options: dict[str, str]
) -> None:
    """A strategy's advantage in each deal size, times the deals of that size, adds up to its
    advantage per game; every trick of a deal is some seat's; the rest of the report is what
    a tournament without the breakdown gives."""
    games = 8 if game != "358" else 9
    report = run_tournament(game, seats, games, 3, options=options, by_deal=True)
    plain = run_tournament(game, seats, games, 3, options=options)
    assert {key: value for key, value in report.items() if key not in ("by_deal", "seconds")} == {
        key: value for key, value in plain.items() if key != "seconds"
    }
    rows = report["by_deal"]
    for name in ("rules", "random"):
        from_deals = sum(row["advantage"] * row["deals"] for row in rows[name]) / report["games"]
        assert from_deals == pytest.approx(report[name]["advantage"], abs=0.01)
    if game == "belote":
        belote_sides_parts(rows)
        return
    if game == "358":
        three_five_eight_parts(rows, report["games"])
        return
    deals = {name: {row["cards_each"]: row for row in rows[name]} for name in rows}
    assert deals["rules"].keys() == deals["random"].keys()
    for size, row in deals["rules"].items():
        other = deals["random"][size]
        assert row["deals"] == other["deals"] > 0
        taken = sum(deals[name][size]["tricks"] * seats.count(name) for name in rows)
        assert taken == pytest.approx(size, abs=0.01)
    if game == "whist":
        assert sorted(deals["rules"]) == list(range(1, 9))
        # four one-card deals at each end, four of eight cards in the middle
        assert (deals["rules"][1]["deals"], deals["rules"][8]["deals"]) == (8 * games, 4 * games)
        middle = [row["deals"] for size, row in deals["rules"].items() if 1 < size < 8]
        assert middle == [2 * games] * 6
        for row in rows["rules"]:
            assert 0 <= row["exact_rate"] + row["over_rate"] <= 1
            assert 0 <= row["bid"] <= row["cards_each"]
    else:
        assert all("bid" not in row for entries in rows.values() for row in entries)
        assert len(rows["rules"]) == 1


def belote_sides_parts(rows: dict[str, list[dict[str, Any]]]) -> None:
    """Belote's deals by side's part: one side's takes are the other's defences, a deal
    thrown in is both sides', the tricks of a deal played are all eight, and the contracts a
    side made are a share of those it took."""
    parts = {name: {row["role"]: row for row in rows[name]} for name in rows}
    for name, other in (("rules", "random"), ("random", "rules")):
        assert parts[name]["took"]["deals"] == parts[other]["defended"]["deals"] > 0
        assert 0 <= parts[name]["took"]["made_rate"] <= 1
        assert "made_rate" not in parts[name]["defended"]
        took, defended = parts[name]["took"], parts[other]["defended"]
        assert 2 * (took["tricks"] + defended["tricks"]) == pytest.approx(8, abs=0.01)
    thrown = [parts[name].get("thrown in", {}).get("deals", 0) for name in rows]
    assert thrown[0] == thrown[1]
    # The rule-based side takes more than the random one, and makes most of what it takes.
    assert parts["rules"]["took"]["made_rate"] > parts["random"]["took"]["made_rate"]


def three_five_eight_parts(rows: dict[str, list[dict[str, Any]]], games: int) -> None:
    """3-5-8's deals by a seat's part: each seat declares six of its eighteen deals, each
    contract once (four trump suits, no trump, minimum tricks), and is third player and
    dealer in six each; against random players the rule-based declarer beats its target."""
    parts = {name: {row["role"]: row for row in rows[name]} for name in rows}
    for name in rows:
        assert parts[name]["declared trump"]["deals"] == 4 * games
        assert parts[name]["declared NT"]["deals"] == parts[name]["declared MT"]["deals"] == games
        assert parts[name]["third"]["deals"] == parts[name]["dealer"]["deals"] == 6 * games
        assert all("made_rate" not in row for row in rows[name])
    # Against random players the rule-based declarer beats its target of eight, and takes
    # far fewer tricks in minimum tricks, where each one costs it.
    declared = parts["rules"]["declared trump"]["tricks"]
    assert declared > 8 > parts["rules"]["declared MT"]["tricks"]


def test_whist_rates_count_the_bids_made_exactly_and_exceeded() -> None:
    """The breakdown's bid figures, counted again from the deals it read."""
    lines = [
        deal_breakdown.DealLine("a", 3, 6, 1.0, 1, 1),  # exact
        deal_breakdown.DealLine("a", 3, -2, 1.0, 2, 0),  # over by two
        deal_breakdown.DealLine("a", 3, -1, 1.0, 0, 1),  # under
        deal_breakdown.DealLine("a", 3, 5, 1.0, 0, 0),  # exact
        deal_breakdown.DealLine("b", 3, 0, -1.0, 2, 3),
        deal_breakdown.DealLine("b", 3, 0, -1.0, 1, 3),
    ]
    (row,) = deal_breakdown.breakdown(lines, {"a": 2, "b": 1})["a"]
    assert row == {
        "cards_each": 3,
        "deals": 2,
        "mean_score": 2.0,
        "advantage": 1.0,
        "tricks": 0.75,
        "bid": 0.5,
        "exact_rate": 0.5,
        "over_rate": 0.25,
    }


def test_the_command_line_breaks_a_tournament_down_by_deal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # as in a shell (xdist's workers set 80)
    args = ["tournament", "--game", "whist", "--seats", "rules,random,rules", "--games", "3",
            "--seed", "1", "--workers", "1", "--by-deal"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["cards_each"] for row in report["by_deal"]["rules"]] == list(range(1, 9))
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "by deal size" in printed
    for column in ("cards each", "advantage/deal", "exact", "over"):
        assert column in printed


class StopAfter:
    """A progress callback that interrupts the tournament once ``games`` games are done, as
    the terminal's interrupt would."""

    def __init__(self, games: int) -> None:
        self.games = games

    def __call__(self, done: int, total: int) -> None:
        if done >= self.games:
            raise KeyboardInterrupt


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stopped_tournament_reports_the_boards_it_finished(workers: int) -> None:
    """Stopped while it tells of its fifth game (its third board's first, the board done), a
    run reports three boards, exactly as a run of three."""
    seats = ["rules", "random", "rules", "random"]
    options = {"quick": "true"}
    whole = run_tournament("hearts", seats, 40, 3, options=options, by_deal=True)
    stopped = run_tournament(
        "hearts", seats, 40, 3, options=options, by_deal=True, workers=workers,
        progress=StopAfter(5),
    )  # fmt: skip
    short = run_tournament("hearts", seats, 6, 3, options=options, by_deal=True)
    assert whole["stopped"] is False and stopped["stopped"] is True
    assert (stopped["boards"], stopped["games"]) == (3, 6)
    assert stopped["rules"]["board_advantages"] == whole["rules"]["board_advantages"][:3]
    for report in (stopped, short):
        del report["seconds"], report["workers"], report["stopped"]
    assert stopped == short
    workers = [
        child for child in psutil.Process().children() if "spawn_main" in " ".join(child.cmdline())
    ]
    assert not workers, "the pool's workers outlived the stop"


def test_a_tournament_stopped_before_its_first_board_has_nothing_to_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "play_board", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_tournament("hearts", ["rules", "random", "rules", "random"], 4, 1)
    argv = ["tournament", "--game", "hearts", "--seats", "rules,random,rules,random",
            "--games", "4", "--option", "quick=true", "--workers", "1"]  # fmt: skip
    assert main(argv) == 130
    assert "stopped before a board was finished" in capsys.readouterr().err


def test_later_boards_of_a_seed_are_the_same_boards_a_longer_run_plays() -> None:
    seats = ["rules", "random", "rules", "random"]
    whole = run_tournament("whist", seats, 8, 4)
    later = run_tournament("whist", seats, 4, 4, first_board=2)
    assert later["first_board"] == 2 and later["boards"] == 2
    assert later["rules"]["board_advantages"] == whole["rules"]["board_advantages"][2:]
    with pytest.raises(ValueError, match="first board"):
        run_tournament("whist", seats, 4, 4, first_board=-1)


def test_sigterm_stops_the_command_with_the_report_of_the_boards_finished() -> None:
    """An operator's ``kill`` (or a ``timeout``) ends a long run with what it played so far,
    and the command says where the next run picks up; the workers end with it."""
    command = [
        *CARDTABLE,
        "tournament", "--game", "hearts", "--seats", "rules,random,rules,random",
        "--option", "quick=true", "--games", "20000", "--seed", "1", "--workers", "2", "--json",
    ]  # fmt: skip
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert run.stderr is not None
        said = run.stderr.readline()
        assert "games/s" in said, said  # the estimate: the run has begun
        time.sleep(3)
        workers = psutil.Process(run.pid).children()
        run.terminate()
        out, err = run.communicate(timeout=30)
    finally:
        run.kill()
    assert run.returncode == 0, err
    report = json.loads(out)
    assert report["stopped"] is True and 0 < report["boards"] < 10000
    assert report["games"] == 2 * report["boards"]
    following = report["boards"]
    assert f"--seed 1 --first-board {following} plays on" in " ".join(err.split())
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"workers still running after the tournament ended: {alive}"
