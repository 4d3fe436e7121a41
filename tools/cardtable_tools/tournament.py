"""Duplicate tournaments between strategies, engine only: the ``cardtable tournament`` command.

Luck of the cards dwarfs skill in a handful of games, so the games are played in *boards*: a
board is one sequence of deals (one deck order per deal, and the first dealer) played once per
rotation of the strategies round the seats. Every strategy thus plays every seat on the same
cards, and what differs between the games of a board is who played them. A rotation that
repeats an earlier one's seating (``a,b,a,b`` turned by two) is skipped unless asked for: it
would replay the same cards in the same hands, so a new board's cards tell more than it does.

A strategy's result in a game is its *advantage*: the mean final score of its seats minus the
mean of the other seats, oriented so that positive is better (Hearts scores count against).
Boards are independent, so the 95% confidence interval of the mean advantage comes from the
spread of the board means: mean ± t(0.975, boards - 1) × sd / sqrt(boards).

Boards are also the unit of work handed to a pool of processes (``workers``, all the cores by
default). A board's games depend only on the seed and the board's number (its cards, every
seat's generator, and the search's budget, which is counted in work, not time:
``cardtable.bots.search``), and the results are summed in board order whatever order the
workers finish in, so a pool gives exactly what a serial run gives.

A run can also be cut into pieces: ``first_board`` starts at a later board of the seed, and a
run stopped early (the terminal's interrupt, or ``SIGTERM`` to the command) reports the boards
it finished, so an hours-long match-up lost to a stop costs only the board in play, and the
next run picks up from the first board not played (``cardtable_tools.tournament_pool`` pools
the pieces).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import signal
import statistics
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

from cardtable.bots.levels import strategy_and_options
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import WORK_UNITS_PER_MS, SearchStrategy
from cardtable.bots.strategy import Strategy
from cardtable.engine.actions import parse_action
from cardtable.engine.cards import Card
from cardtable.engine.game import GameSpec
from cardtable.engine.ranking import win_shares as seat_win_shares
from cardtable.engine.registry import game_spec
from cardtable_tools.deal_breakdown import DealLine, DealTally, breakdown

#: Two-sided 95% quantiles of Student's t for 1 to 30 degrees of freedom; 1.96 beyond.
T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile(degrees: int) -> float:
    return T_975[degrees - 1] if 1 <= degrees <= len(T_975) else 1.96


def confidence_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% interval of the mean of independent ``values`` (a point for fewer than two)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean
    half = t_quantile(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def boards_to_clear(values: Sequence[float]) -> int | None:
    """How many boards would give a 95% interval clear of zero if the boards' mean and spread
    stayed what ``values`` show: how long a tournament to run to tell this difference apart,
    an estimate, as both will move. ``None`` for a mean of zero or fewer than two boards.

    >>> boards_to_clear([1.0, 3.0]), boards_to_clear([-4.0, -4.0]), boards_to_clear([1.0, -1.0])
    (5, 2, None)
    >>> boards_to_clear([1.1, -0.9] * 50)  # a tenth of the spread: about (1.96 / 0.1)² boards
    389
    """
    mean = statistics.fmean(values) if values else 0.0
    if len(values) < 2 or mean == 0:
        return None
    spread = statistics.stdev(values)
    for boards in range(2, len(T_975) + 2):
        if t_quantile(boards - 1) * spread / math.sqrt(boards) < abs(mean):
            return boards
    beyond = math.floor((t_quantile(len(T_975) + 1) * spread / abs(mean)) ** 2) + 1
    return max(len(T_975) + 2, beyond)


@dataclass
class GameResult:
    """One finished game: the strategy name at each seat, final totals and places."""

    seats: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]


class Board:
    """One board's cards: the first dealer and, lazily, one deck order per deal."""

    def __init__(self, spec: GameSpec, players: int, seed: str) -> None:
        self.rng = random.Random(seed)
        self.first_dealer = self.rng.randrange(players)
        self.decks: list[list[Card]] = []
        self.deck = spec.new_game(players, None, 0).deck()

    def deck_order(self, deal_index: int) -> list[Card]:
        while len(self.decks) <= deal_index:
            order = list(self.deck)
            self.rng.shuffle(order)
            self.decks.append(order)
        return self.decks[deal_index]


def play_game(
    spec: GameSpec,
    options: Mapping[str, Any] | None,
    board: Board,
    strategies: Sequence[Strategy],
    rngs: Sequence[random.Random],
    choices: list[int] | None = None,
    tally: DealTally | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Play one whole game on ``board``'s cards; each seat sees only its observation.

    ``choices``, if given, counts for each seat the moves where it had more than one;
    ``tally``, if given, reads the game's facts deal by deal.
    """
    state = spec.new_game(len(strategies), options, board.first_dealer)
    deals = 0
    while not state.is_over():
        if state.needs_deal():
            facts = state.deal(board.deck_order(deals))
            deals += 1
        else:
            seat = state.to_act()[0]
            if choices is not None and len(state.legal_actions(seat)) != 1:
                choices[seat] += 1  # none listed: a set of cards to choose
            text = strategies[seat].choose(state.observation(seat), rngs[seat])
            facts = state.apply(seat, parse_action(text))
        if tally is not None:
            tally.read(facts)
    places = state.places()
    assert places is not None
    return tuple(state.totals), places


@dataclass
class StrategyStats:
    """Running sums for one strategy over the tournament."""

    scores: list[float] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)
    board_advantages: list[float] = field(default_factory=list)


def game_advantages(
    seats: Sequence[str], totals: Sequence[int], lower_is_better: bool
) -> dict[str, float]:
    """Each strategy's mean score over its seats minus the other seats', higher is better."""
    sign = -1 if lower_is_better else 1
    result = {}
    for name in set(seats):
        own = [sign * totals[seat] for seat, held in enumerate(seats) if held == name]
        others = [sign * totals[seat] for seat, held in enumerate(seats) if held != name]
        result[name] = statistics.fmean(own) - statistics.fmean(others)
    return result


def win_shares(
    seats: Sequence[str], places: Sequence[int], teams: Sequence[Sequence[int]] = ()
) -> dict[str, float]:
    """Each strategy's win rate in one game: the chance that one of its seats won.

    Winners tied for first split the win, partners counting as one winner (a Belote team
    wins as a pair); a strategy holding several seats gets the mean over them.
    """
    shares = seat_win_shares(places, teams)
    return {
        name: statistics.fmean(
            share for share, held in zip(shares, seats, strict=True) if held == name
        )
        for name in set(seats)
    }


def tournament_games(games: int, per_board: int) -> int:
    """The games a tournament of about ``games`` plays: whole boards of ``per_board`` games.

    >>> tournament_games(38, 4), tournament_games(0, 3), tournament_games(39, 2)
    (40, 3, 40)
    """
    return max(1, math.ceil(games / per_board)) * per_board


def board_seatings(
    names: Sequence[str], every_rotation: bool = False
) -> list[tuple[int, tuple[str, ...]]]:
    """A board's games: each rotation's number and the strategy at each seat, the strategies
    moved one seat on per rotation; a seating an earlier rotation gave is left out unless
    ``every_rotation``.

    >>> board_seatings(["a", "b", "a", "b"])
    [(0, ('a', 'b', 'a', 'b')), (1, ('b', 'a', 'b', 'a'))]
    >>> len(board_seatings(["a", "b", "a", "b"], every_rotation=True))
    4
    """
    players = len(names)
    played: list[tuple[int, tuple[str, ...]]] = []
    for rotation in range(players):
        seating = tuple(names[(seat - rotation) % players] for seat in range(players))
        if every_rotation or all(seating != earlier for _, earlier in played):
            played.append((rotation, seating))
    return played


#: In a seat's options, the strategy or level a variant seat plays (``--variant``): a name of
#: its own for a level with an option changed, so that the two sit at one table.
VARIANT_OF = "variant_of"


def _line_up(
    game: str,
    seats: Sequence[str],
    options: Mapping[str, Any] | None,
    strategy_options: Mapping[str, Mapping[str, Any]] | None,
) -> tuple[GameSpec, list[str], dict[str, Strategy]]:
    """The game, the strategy name at each seat and a strategy of each name; checked early.

    ``strategy_options`` is keyed by the name as seated: options for ``search`` leave a level
    that plays the search (``hard``) at its own budget, so the ladder measures the level."""
    spec = game_spec(game)
    names = [name.strip().lower() for name in seats]
    if len(set(names)) < 2:
        raise ValueError("a tournament needs at least two different strategies")
    spec.new_game(len(names), options, 0)  # checks the player count and the options early
    _check_teams_hold_one_strategy(spec, names)
    per_name = strategy_options or {}
    strategies = {name: _strategy(name, per_name.get(name, {})) for name in set(names)}
    return spec, names, strategies


def _strategy(name: str, options: Mapping[str, Any]) -> Strategy:
    """The strategy seated as ``name``, made with its options."""
    base, chosen = _seated_as(name, options)
    return strategy_by_name(base, **chosen)


def _seated_as(name: str, options: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """What the seat named ``name`` plays: a strategy or level by that name, or the one a
    variant seat names in its options (:data:`VARIANT_OF`), with the rest of them."""
    chosen = dict(options)
    return str(chosen.pop(VARIANT_OF, name)), chosen


def seated_settings(
    names: Sequence[str], strategy_options: Mapping[str, Mapping[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """What each seated name plays: its strategy and the options it is made with, a level's
    own included, as plain JSON. A report carries them so that it says what played (a level's
    options change with the code) and runs of different settings are never pooled.

    >>> seated_settings(["easy", "fast"], {"fast": {"budget_ms": 5, "variant_of": "search"}})
    {'easy': {'strategy': 'rules', 'options': {}}, 'fast': {'strategy': 'search', 'options': {'budget_ms': 5}}}
    """  # noqa: E501
    settings = {}
    for name in dict.fromkeys(names):
        base, chosen = _seated_as(name, (strategy_options or {}).get(name, {}))
        strategy, options = strategy_and_options(base, **chosen)
        settings[name] = {"strategy": strategy, "options": plain_json(options)}
    return settings


def plain_json(value: Any) -> Any:
    """``value`` with mappings as dicts and other collections as lists (sets sorted), as
    ``json`` writes it and reads it back: two settings compare equal read from a file or not.

    >>> plain_json({"games": ("whist", "358"), "counts": {"whist": 2}, "on": frozenset("ba")})
    {'games': ['whist', '358'], 'counts': {'whist': 2}, 'on': ['a', 'b']}
    """
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(plain_json(item) for item in value)
    if isinstance(value, (list, tuple)):
        return [plain_json(item) for item in value]
    return value


def _check_teams_hold_one_strategy(spec: GameSpec, names: Sequence[str]) -> None:
    """Partners share a score: a team of two strategies would credit each with the other's
    play (a ladder of ``hard,normal,easy,easy`` in Belote puts easy at exactly 0)."""
    if all(len({names[seat] for seat in team}) == 1 for team in spec.teams):
        return
    first, second = list(dict.fromkeys(names))[:2]
    example = ",".join(first if seat in spec.teams[0] else second for seat in range(len(names)))
    teams = ", ".join("+".join(str(seat) for seat in team) for team in spec.teams)
    raise ValueError(
        f"{spec.name} is played in teams (seats {teams}): partners share a score, so give "
        f"each team one strategy, e.g. {example}"
    )


def thinking_seconds(strategy: Strategy) -> float:
    """About the time ``strategy`` spends on a move with a choice, if its work is bounded by
    a budget (the search's, about that many milliseconds of a quiet core); 0 for a strategy
    that answers at once or draws a fixed number of deals."""
    if isinstance(strategy, SearchStrategy) and strategy.worlds is None:
        return strategy.budget_ms / 1000
    return 0.0


class WorkClock:
    """Work the trial's one-deal searches did and the CPU time it took them: how fast this
    machine does a unit of the search's work against the quiet core budgets are sized for."""

    def __init__(self) -> None:
        self.units = 0
        self.seconds = 0.0

    def quiet_core_ratio(self) -> float:
        """How many times longer than its budget a search here thinks (below 1: faster);
        1 when the trial did too little work to tell.

        >>> clock = WorkClock()
        >>> clock.units, clock.seconds = 75_000, 1.0
        >>> clock.quiet_core_ratio()
        2.0
        """
        if self.units < MIN_TIMED_UNITS or self.seconds <= 0:
            return 1.0
        return WORK_UNITS_PER_MS * 1000 * self.seconds / self.units


#: Work units the trial must time before its speed is believed.
MIN_TIMED_UNITS = 500


@dataclass
class _ClockedSearch:
    """A one-deal search that adds its work and CPU time to a clock."""

    search: SearchStrategy
    clock: WorkClock
    name: str = SearchStrategy.name

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        started = time.process_time()
        action = self.search.choose(observation, rng)
        self.clock.seconds += time.process_time() - started
        self.clock.units += self.search.last_work
        return action


def _one_deal_a_move(strategy: Strategy, clock: WorkClock) -> Strategy:
    """``strategy``, or for a search that thinks to a budget the same search drawing one deal,
    timed on ``clock``."""
    if not thinking_seconds(strategy):
        return strategy
    assert isinstance(strategy, SearchStrategy)
    one_deal = SearchStrategy(
        strategy.budget_ms,
        worlds=1,
        playout=strategy.playout,
        set_candidates=strategy.set_candidates,
    )
    return _ClockedSearch(one_deal, clock)


@dataclass(frozen=True)
class GameEstimate:
    """About how long one game of a tournament takes, in the parts it is worked out from."""

    #: The trial game's own wall time, its searches drawing one deal a move.
    trial_seconds: float
    #: The searches' budgets over the moves where a seat had a choice: seconds of a quiet core.
    thinking_seconds: float
    #: How much the machine's load stretched the trial (its wall time over its CPU time).
    slowdown: float
    #: How many times longer than a quiet core this machine takes for the searches' work.
    speed: float

    @property
    def seconds(self) -> float:
        """
        >>> GameEstimate(0.5, 2.0, slowdown=1.5, speed=0.5).seconds
        2.0
        """
        return self.trial_seconds + self.thinking_seconds * self.slowdown * self.speed


def estimate_game(
    game: str,
    seats: Sequence[str],
    seed: int,
    *,
    options: Mapping[str, Any] | None = None,
    strategy_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> GameEstimate:
    """About how long one game of :func:`run_tournament` takes, found in well under a second.

    A strategy that thinks to a budget (``search``: about its budget in time at every move
    with more than one choice, more on a busy machine) would make a trial game as slow as the
    real ones, so the trial plays the first board with the search drawing a single deal a move
    (what it does past its budget while it finishes the deal in hand), counts the moves where
    a seat had a choice, and adds the budget for those, stretched as much as the machine's
    load stretched the trial, and as much as this machine's CPU is slower than the quiet core
    the budget's work rate was set on (the one-deal searches' own work per CPU second). Over a
    board every strategy plays every seat, so a thinker's moves are counted as the mean over
    the seats.
    """
    spec, names, strategies = _line_up(game, seats, options, strategy_options)
    players = len(names)
    clock = WorkClock()
    seated = [_one_deal_a_move(strategies[name], clock) for name in names]
    board = Board(spec, players, f"{seed}/0")
    rngs = [random.Random(f"{seed}/0/0/{seat}") for seat in range(players)]
    choices = [0] * players
    started, started_cpu = time.perf_counter(), time.process_time()
    play_game(spec, options, board, seated, rngs, choices=choices)
    trial = time.perf_counter() - started
    thinking = sum(thinking_seconds(strategies[name]) for name in names)
    return GameEstimate(
        trial_seconds=trial,
        thinking_seconds=thinking * statistics.fmean(choices),
        slowdown=max(1.0, trial / max(time.process_time() - started_cpu, 1e-6)),
        speed=clock.quiet_core_ratio(),
    )


class BoardGame(NamedTuple):
    """One game of a board."""

    seating: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    #: Each seat's deals, when the tournament breaks its figures down by deal.
    deals: tuple[DealLine, ...] = ()


def play_board(
    game: str,
    names: Sequence[str],
    seed: int,
    board_number: int,
    options: Mapping[str, Any] | None = None,
    strategy_options: Mapping[str, Mapping[str, Any]] | None = None,
    every_rotation: bool = False,
    by_deal: bool = False,
) -> list[BoardGame]:
    """The rotations of ``names`` round the seats (:func:`board_seatings`) on board
    ``board_number``'s cards; with ``by_deal``, each game's deals too.

    A function of its arguments alone (the strategies are made afresh), so that any process
    can play any board and give the same games.
    """
    spec, names, strategies = _line_up(game, names, options, strategy_options)
    players = len(names)
    board = Board(spec, players, f"{seed}/{board_number}")
    played = []
    for rotation, seating in board_seatings(names, every_rotation):
        rngs = [
            random.Random(f"{seed}/{board_number}/{rotation}/{seat}") for seat in range(players)
        ]
        tally = None
        if by_deal:
            advantages = partial(game_advantages, seating, lower_is_better=spec.lower_is_better)
            tally = DealTally(seating, advantages)
        totals, places = play_game(
            spec, options, board, [strategies[name] for name in seating], rngs, tally=tally
        )
        played.append(BoardGame(seating, totals, places, tuple(tally.lines) if tally else ()))
    return played


def default_workers() -> int:
    """The processes a tournament uses unless told: one per core this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


#: How often a worker checks that the tournament that started it is still there.
PARENT_CHECK_SECONDS = 1.0


def exit_with_parent(parent_pid: int, check_seconds: float = PARENT_CHECK_SECONDS) -> None:
    """Make this worker process end when ``parent_pid`` is no longer its parent.

    A pool's workers do not notice their parent's death: a tournament stopped by a signal other
    than the terminal's interrupt (``kill``, a ``timeout`` wrapper) would leave them playing
    their boards, a core each, for as long as a board takes.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(check_seconds)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _worker_setup(parent_pid: int) -> None:
    """A pool worker's start: the terminal's interrupt is the tournament's to handle (it ends
    the workers), and the worker ends with the tournament (:func:`exit_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent_pid)


def _boards_played(
    game: str,
    names: Sequence[str],
    seed: int,
    numbers: range,
    workers: int,
    options: Mapping[str, Any] | None,
    strategy_options: Mapping[str, Mapping[str, Any]] | None,
    every_rotation: bool,
    by_deal: bool,
) -> Generator[list[BoardGame], None, None]:
    """The games of the boards ``numbers``, in order; played by ``workers`` processes if more
    than one. A caller that stops early ends the workers at once, boards in play and all."""
    board = partial(
        play_board,
        game,
        names,
        seed,
        options=options,
        strategy_options=strategy_options,
        every_rotation=every_rotation,
        by_deal=by_deal,
    )
    if workers <= 1 or len(numbers) <= 1:
        for number in numbers:
            yield board(number)
        return
    # spawn, not fork: a forked copy of a process holding gRPC or other threads can deadlock,
    # and a board needs nothing of the parent's but its arguments.
    context = multiprocessing.get_context("spawn")
    pool = context.Pool(min(workers, len(numbers)), _worker_setup, (os.getpid(),))
    finished = False
    try:
        yield from pool.imap(board, numbers)
        finished = True
    finally:
        if finished:
            pool.close()
        else:
            pool.terminate()
        pool.join()


def run_tournament(
    game: str,
    seats: Sequence[str],
    games: int,
    seed: int,
    *,
    options: Mapping[str, Any] | None = None,
    strategy_options: Mapping[str, Mapping[str, Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    every_rotation: bool = False,
    by_deal: bool = False,
    first_board: int = 0,
) -> dict[str, Any]:
    """Play about ``games`` games (rounded up to whole boards) and report each strategy.

    ``seats`` names the strategy at each seat for the first rotation; the other rotations
    move every strategy one seat on, those repeating a seating left out unless
    ``every_rotation`` (:func:`board_seatings`). The report holds, per strategy, ``mean_score`` (its
    seats' mean final total), ``win_rate`` (how often one of its seats wins), ``advantage`` (mean
    advantage per game), ``ci95`` (that advantage's 95% interval) and ``games_to_clear`` (about
    how many games would take that interval clear of zero: :func:`boards_to_clear`) and
    ``board_advantages`` (its mean advantage on each board, in board order: two runs of one seed
    play the same cards, so their boards pair up); ``ladder``, the
    strategies from the strongest (highest advantage) down; plus ``games``, ``boards``,
    ``workers`` and ``seconds``, and what was played: ``seed``, ``first_board`` (the seed's
    boards are played from this one on), ``every_rotation``, the game's
    ``options`` and each seated name's ``settings`` (:func:`seated_settings`). ``workers``
    processes play the boards; the report is the same for any number of them but for
    ``workers`` and ``seconds``. With ``by_deal`` it holds
    ``by_deal`` too: each strategy's deals by size (``deal_breakdown.breakdown``).

    A ``KeyboardInterrupt`` while it plays (the terminal's interrupt; the command turns
    ``SIGTERM`` into one) stops it: the report then holds the boards finished, with
    ``stopped`` true (false for a run that played them all); with none finished it is raised.
    """
    if first_board < 0:
        raise ValueError("the first board is a board's number: 0 or more")
    spec, names, _ = _line_up(game, seats, options, strategy_options)
    players = len(names)
    per_board = len(board_seatings(names, every_rotation))
    boards = tournament_games(games, per_board) // per_board
    workers = max(1, min(workers, boards))
    started = time.perf_counter()
    numbers = range(first_board, first_board + boards)
    played = _boards_played(
        game, names, seed, numbers, workers, options, strategy_options, every_rotation, by_deal
    )
    # Boards are only kept here while they play, and summed once play is over: an interrupt
    # then never leaves a board half counted.
    finished: list[list[BoardGame]] = []
    stopped = False
    try:
        for board_games in played:
            finished.append(board_games)
            if progress is not None:
                for game_number in range(1, len(board_games) + 1):
                    progress((len(finished) - 1) * per_board + game_number, boards * per_board)
    except KeyboardInterrupt:
        played.close()
        if not finished:
            raise
        stopped = True
    report: dict[str, Any] = {
        "game": spec.name,
        "players": players,
        "seats": names,
        "seed": seed,
        "first_board": first_board,
        "every_rotation": every_rotation,
        "options": plain_json(options or {}),
        "settings": seated_settings(names, strategy_options),
        "games": len(finished) * per_board,
        "boards": len(finished),
        "stopped": stopped,
        "workers": workers,
        "seconds": round(time.perf_counter() - started, 2),
    }
    stats = board_stats(spec, names, finished)
    for name in sorted(stats, key=names.index):
        entry = stats[name]
        low, high = confidence_interval(entry.board_advantages)
        report[name] = {
            "mean_score": round(statistics.fmean(entry.scores), 3),
            "win_rate": round(statistics.fmean(entry.wins), 4),
            "advantage": round(statistics.fmean(entry.board_advantages), 3),
            "ci95": [round(low, 3), round(high, 3)],
            "games_to_clear": _games(boards_to_clear(entry.board_advantages), per_board),
            "board_advantages": [round(value, 3) for value in entry.board_advantages],
        }
    report["ladder"] = strength_ladder(report)
    if by_deal:
        lines = [line for board in finished for one in board for line in one.deals]
        report["by_deal"] = breakdown(lines, {name: names.count(name) for name in stats})
    return report


def board_stats(
    spec: GameSpec, names: Sequence[str], boards: Sequence[Sequence[BoardGame]]
) -> dict[str, StrategyStats]:
    """Each strategy's scores, wins and board advantages over ``boards``, in board order."""
    stats = {name: StrategyStats() for name in set(names)}
    for board_games in boards:
        advantages: dict[str, list[float]] = {name: [] for name in stats}
        for seating, totals, places, _ in board_games:
            for name, advantage in game_advantages(seating, totals, spec.lower_is_better).items():
                advantages[name].append(advantage)
            for name, share in win_shares(seating, places, spec.teams).items():
                stats[name].wins.append(share)
            for name in stats:
                own = [totals[seat] for seat, held in enumerate(seating) if held == name]
                stats[name].scores.append(statistics.fmean(own))
        for name, values in advantages.items():
            stats[name].board_advantages.append(statistics.fmean(values))
    return stats


def _games(boards: int | None, per_board: int) -> int | None:
    return None if boards is None else boards * per_board


def strength_ladder(report: Mapping[str, Any]) -> list[str]:
    """The report's strategies from the strongest down: by advantage, then win rate; a tie
    keeps the seats' order.

    >>> strength_ladder({"seats": ["a", "b", "c", "b"], "a": {"advantage": -1.0, "win_rate": 0.2},
    ...                  "b": {"advantage": 2.0, "win_rate": 0.5},
    ...                  "c": {"advantage": -1.0, "win_rate": 0.3}})
    ['b', 'c', 'a']
    """
    names = list(dict.fromkeys(report["seats"]))
    return sorted(
        names,
        key=lambda name: (-report[name]["advantage"], -report[name]["win_rate"], names.index(name)),
    )
