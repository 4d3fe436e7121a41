"""Whether one player's decisions are better than another's, where they differ, in real play.

    python -m cardtable_tools.bench.decision_rollouts --game whist --phase bid \\
        --player hard:budget_ms=12.5 --opponent search:budget_ms=50 \\
        --judge hard:budget_ms=12.5,weigh_contracts=false --boards 16 --min-cards 7

A tournament needs hours to see a Whist difference of a point a game, and ``search_regret``
scores a player only against the search's own objective, which shares the playouts' model of
the others. This plays games with ``--player`` at its seats (0 and 2 of four; 0 of three) and
``--opponent`` at the others. At each of the player's decisions of ``--phase`` (bids and
contract choices, card plays, or sets of cards to pass or discard) holding ``--min-cards``
cards or more, it asks ``--judge`` what it would do in the same view. Where the two differ,
it plays the rest of the deal on from each choice ``--rollouts`` times with the real players
(fresh ones, each seeing only its own view; the same rngs for both choices) and keeps the
difference of the seat's deal advantage: the player's choice minus the judge's. Games go on
with the player's choice.

A mean above zero says the player decides better than the judge where they part; the
standard error says how sure. The judge sees only the decisions it is asked about, so with
``adaptive`` its bank fills and it spends up to a move's most on each. Prints one JSON
object: the decisions judged and the difference, overall and by cards held.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from cardtable.bots.card_plays import chooses_a_card
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import deal_advantage
from cardtable.bots.strategy import Strategy
from cardtable.engine.actions import parse_action
from cardtable.engine.game import GameState
from cardtable.engine.registry import game_spec
from cardtable_tools.player_spec import parse_player
from cardtable_tools.tournament import Board

PHASES = ("bid", "play", "set")


@dataclass(frozen=True)
class Judged:
    """A decision where the player and the judge parted, and what each choice was worth."""

    cards: int
    chosen: str
    judge: str
    #: The seat's deal advantage after the player's choice minus after the judge's, a
    #: rollout each.
    differences: tuple[float, ...]


@dataclass(frozen=True)
class Setup:
    """What every board of a run plays and judges (sent whole to each worker process)."""

    game: str
    players: int
    player: str
    opponent: str
    judge: str
    phase: str
    min_cards: int
    rollouts: int
    seed: int


def make(text: str) -> Strategy:
    name, options = parse_player(text)
    return strategy_by_name(name, **options)


def player_seats(players: int) -> tuple[int, ...]:
    """The seats the player holds: every other seat of four, the first of three.

    >>> player_seats(4), player_seats(3)
    ((0, 2), (0,))
    """
    return (0, 2) if players == 4 else (0,)


def deal_value(
    state: GameState,
    seat: int,
    strategies: Sequence[Strategy],
    rng: random.Random,
    deals: int,
) -> float:
    """Play ``state``'s deal to its end with ``strategies``: ``seat``'s deal advantage.
    ``deals`` is the deals scored before the decision judged, which may itself end the deal
    (Belote's last pass throws the cards in)."""
    while len(state.deal_scores) == deals:
        actor = state.to_act()[0]
        text = strategies[actor].choose(state.observation(actor), rng)
        state.apply(actor, parse_action(text))
    return deal_advantage(state.deal_scores[-1], seat, state.spec.lower_is_better)


def cards_held(view: Mapping[str, Any]) -> int:
    return len(view.get("hand") or [])


def is_judged(setup: Setup, state: GameState, seat: int, view: Mapping[str, Any]) -> bool:
    """Whether the player's decision is of the phase judged, with cards enough and a choice:
    a set of cards to pass or discard is judged in the ``set`` phase only."""
    if cards_held(view) < setup.min_cards:
        return False
    if state.card_set_choice(seat) is not None:
        return setup.phase == "set"
    actions = state.legal_actions(seat)
    if setup.phase == "set" or len(actions) < 2:
        return False
    return chooses_a_card(actions) == (setup.phase == "play")


def judge_board(setup: Setup, board_number: int) -> list[Judged]:
    """One game on board ``board_number``'s cards, every decision the judge parts on valued."""
    spec = game_spec(setup.game)
    board = Board(spec, setup.players, f"{setup.seed}/{board_number}")
    ours = player_seats(setup.players)
    names = [setup.player if seat in ours else setup.opponent for seat in range(setup.players)]
    strategies = [make(name) for name in names]
    judge = make(setup.judge)
    rngs = [random.Random(f"{setup.seed}/{board_number}/{seat}") for seat in range(setup.players)]
    state = spec.new_game(setup.players, None, board.first_dealer)
    deals = 0
    judged: list[Judged] = []
    while not state.is_over():
        if state.needs_deal():
            state.deal(board.deck_order(deals))
            deals += 1
            continue
        seat = state.to_act()[0]
        view = state.observation(seat)
        chosen = strategies[seat].choose(view, rngs[seat])
        if seat in ours and is_judged(setup, state, seat, view):
            tag = f"{setup.seed}/{board_number}/{deals}/{seat}/{len(judged)}"
            other = judge.choose(view, random.Random(f"judge/{tag}"))
            if other != chosen:
                choices = (chosen, other)
                judged.append(valued(setup, state, seat, cards_held(view), choices, names, tag))
        state.apply(seat, parse_action(chosen))
    return judged


def valued(
    setup: Setup,
    state: GameState,
    seat: int,
    cards: int,
    choices: tuple[str, str],
    names: Sequence[str],
    tag: str,
) -> Judged:
    """The player's choice and the judge's, each played on ``setup.rollouts`` times by fresh
    real players, their rngs paired."""
    differences = []
    for rollout in range(setup.rollouts):
        values = []
        for action in choices:
            after = state.clone()
            after.apply(seat, parse_action(action))
            players = [make(name) for name in names]
            rng = random.Random(f"{tag}/{rollout}")
            values.append(deal_value(after, seat, players, rng, len(state.deal_scores)))
        differences.append(values[0] - values[1])
    return Judged(cards, choices[0], choices[1], tuple(differences))


def mean_and_error(values: Sequence[float]) -> dict[str, float | int]:
    """The mean of ``values`` and its standard error (0 for fewer than two)."""
    mean = statistics.fmean(values) if values else 0.0
    error = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return {"decisions": len(values), "difference": round(mean, 3), "error": round(error, 3)}


def summary(judged: Sequence[Judged]) -> dict[str, Any]:
    """The player's choice minus the judge's, a decision's mean over its rollouts, overall
    and by cards held."""
    means = [statistics.fmean(item.differences) for item in judged]
    by_cards: dict[int, list[float]] = {}
    for item, mean in zip(judged, means, strict=True):
        by_cards.setdefault(item.cards, []).append(mean)
    return {
        "overall": mean_and_error(means),
        "by_cards": {str(cards): mean_and_error(by_cards[cards]) for cards in sorted(by_cards)},
    }


def run(setup: Setup, boards: int, workers: int) -> list[Judged]:
    judged: list[Judged] = []
    with ProcessPoolExecutor(workers) as pool:
        for done, found in enumerate(
            pool.map(judge_board, [setup] * boards, range(boards)), start=1
        ):
            judged.extend(found)
            print(
                f"decision_rollouts: {done}/{boards} boards, {len(judged)} decisions judged",
                file=sys.stderr,
                flush=True,
            )
    return judged


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=["whist", "358", "belote", "hearts"], default="whist")
    parser.add_argument("--players", type=int, default=0, help="default: 3 in 3-5-8, else 4")
    parser.add_argument("--player", default="hard:budget_ms=12.5", help="name[:key=value,...]")
    parser.add_argument("--opponent", default="search:budget_ms=50")
    parser.add_argument("--judge", required=True, help="the player to compare decisions with")
    parser.add_argument("--phase", choices=PHASES, default="bid")
    parser.add_argument("--min-cards", type=int, default=1)
    parser.add_argument("--boards", type=int, default=16)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--decisions", action="store_true", help="list every decision judged")
    args = parser.parse_args(argv)
    players = args.players or (3 if args.game == "358" else 4)
    setup = Setup(
        args.game,
        players,
        args.player,
        args.opponent,
        args.judge,
        args.phase,
        args.min_cards,
        args.rollouts,
        args.seed,
    )
    judged = run(setup, args.boards, args.workers)
    report: dict[str, Any] = {**asdict(setup), "boards": args.boards, **summary(judged)}
    if args.decisions:
        report["decisions"] = [asdict(item) for item in judged]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
