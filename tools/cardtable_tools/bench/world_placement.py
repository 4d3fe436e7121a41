"""How close weighed worlds come to the real deal: keeping one of several drawn, or weighing every
world by its likelihood to a power. The figures behind ``WORLD_CANDIDATES_IN``
(``bots/levels.py``) and ``DEFAULT_IMPORTANCE_POWER`` (``bots/importance.py``).

    python -m cardtable_tools.bench.world_placement --game whist --positions 60 --draws 200

Plays games with the search at ``--budget-ms`` at every seat and takes, at most once a deal, a
card play two to four tricks in where another seat's bid, contract, pass or play says
something. At each it draws ``--draws`` worlds uniformly and reads them as each way of weighing
would: the share of the hidden cards placed in the hand that really holds them (uniform, one
kept of ``k`` drawn, every world weighed by its likelihood to each power), and for the powers
the weights' effective share of the worlds (Kish's effective size over the worlds drawn): what
the weights leave of the worlds the budget paid for. Prints a table, or one JSON object with
``--json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Iterator, Sequence

from cardtable.bots.beliefs import WorldSampler
from cardtable.bots.determinize import sample_placement
from cardtable.bots.importance import WorldWeights
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.search import SearchStrategy
from cardtable.engine.actions import parse_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.registry import game_spec

GAMES = ("whist", "358", "hearts", "belote")
#: The tricks already played in the positions taken: the others have played, not too much.
FIRST_TRICK, LAST_TRICK = 2, 4
KEPT_OF = (2, 4)
POWERS = (1.0, 0.5, 0.25)


def search_positions(
    game: str, players: int, budget_ms: float, count: int, rng: random.Random
) -> Iterator[GameState]:
    """``count`` card plays of games the search plays at every seat, two to four tricks into a
    deal, one a deal at most, where the seat to play has something to weigh worlds by."""
    search = SearchStrategy(budget_ms=budget_ms)
    spec = game_spec(game)
    found = 0
    while found < count:
        state = spec.new_game(players, None, rng.randrange(players))
        taken_in = -1
        while not state.is_over() and found < count:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            deal = len(state.deal_scores)
            tricks = len(getattr(state, "tricks", ()))
            if (
                deal != taken_in
                and state.phase == "play"
                and FIRST_TRICK <= tricks <= LAST_TRICK
                and sampler_for(state, seat).weigh
            ):
                taken_in = deal
                found += 1
                yield state.clone()
            state.apply(seat, parse_action(search.choose(state.observation(seat), rng)))


def sampler_for(state: GameState, seat: int) -> WorldSampler:
    """A sampler weighing by importance: every world drawn uniformly with its log-likelihood,
    which each way of weighing then reads."""
    view = state.observation(seat)
    direction = state.spec.direction
    return WorldSampler(view, hidden_cards(view), sample_placement, direction, True, 2, True)


def share_placed_right(world: GameState, real: GameState, observer: int) -> float:
    """Of the cards in the others' hands, the share ``world`` puts where ``real`` has them."""
    right = total = 0
    for seat in range(real.num_players):
        if seat != observer:
            truth = set(real.hands[seat])  # type: ignore[attr-defined]
            total += len(truth)
            right += len(truth & set(world.hands[seat]))  # type: ignore[attr-defined]
    return right / total


def kept_of(shares: Sequence[float], logs: Sequence[float], k: int) -> float:
    """The expected share of a world kept of ``k`` drawn in proportion to their likelihood, the
    draws taken ``k`` at a time."""
    kept = []
    for start in range(0, len(shares) - k + 1, k):
        weights = WorldWeights(1.0)
        for log in logs[start : start + k]:
            weights.add(log)
        kept.append(statistics.fmean(shares[start : start + k], weights))
    return statistics.fmean(kept)


def measure(state: GameState, draws: int, rng: random.Random) -> dict[str, float]:
    """Each way of weighing's share placed right at one position, and the powers' effective
    shares of the worlds."""
    observer = state.to_act()[0]
    sampler = sampler_for(state, observer)
    shares, logs = [], []
    for _ in range(draws):
        world, log = sampler.draw_weighed(rng)
        shares.append(share_placed_right(world, state, observer))
        logs.append(log)
    row = {"uniform": statistics.fmean(shares)}
    for k in KEPT_OF:
        row[f"kept_of_{k}"] = kept_of(shares, logs, k)
    for power in POWERS:
        weights = WorldWeights(power)
        for log in logs:
            weights.add(log)
        row[f"power_{power:g}"] = statistics.fmean(shares, weights)
        row[f"effective_{power:g}"] = weights.effective_worlds / draws
    return row


def run(
    game: str, players: int, budget_ms: float, positions: int, draws: int, seed: int
) -> dict[str, object]:
    rng = random.Random(seed)
    rows = []
    for state in search_positions(game, players, budget_ms, positions, rng):
        rows.append(measure(state, draws, rng))
        print(f"world_placement: {len(rows)}/{positions} positions", file=sys.stderr)
    means = {key: round(statistics.fmean(row[key] for row in rows), 4) for key in rows[0]}
    return {"game": game, "budget_ms": budget_ms, "positions": positions, "draws": draws, **means}


def table(result: dict[str, object]) -> str:
    """The figures for people: a line for each way of weighing."""
    lines = [
        f"{result['game']}: {result['positions']} positions, {result['draws']} worlds drawn each",
        f"  {'weighing':<22} {'placed right':>12} {'worlds a draw':>13}",
        f"  {'uniform':<22} {result['uniform']:>12.4f} {1:>13.2f}",
    ]
    for k in KEPT_OF:
        lines.append(f"  {f'one kept of {k}':<22} {result[f'kept_of_{k}']:>12.4f} {1 / k:>13.2f}")
    for power in POWERS:
        placed, effective = result[f"power_{power:g}"], result[f"effective_{power:g}"]
        lines.append(f"  {f'every one, power {power:g}':<22} {placed:>12.4f} {effective:>13.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=GAMES, default="whist")
    parser.add_argument("--players", type=int, default=0, help="default: 3 in 3-5-8, else 4")
    parser.add_argument("--budget-ms", type=float, default=3.0)
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    players = args.players or (3 if args.game == "358" else 4)
    result = run(args.game, players, args.budget_ms, args.positions, args.draws, args.seed)
    print(json.dumps(result) if args.json else table(result))


if __name__ == "__main__":
    main()
