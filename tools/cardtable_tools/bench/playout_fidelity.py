"""How well the search's playouts foresee a Whist deal from a bid: the tricks the bidder takes
when the rest of the deal is played by the playout policy, against by the real players.

    python -m cardtable_tools.bench.playout_fidelity --player hard:budget_ms=50 \\
        --opponent search:budget_ms=20 --playout keen --games 30 --sizes 8

The search chooses a bid by playing each candidate out with its playout policy
(``bots/search.py``), so a policy that plays unlike the real players makes it favour the wrong
bid. This plays games with ``--player`` at seats 0 and 2 and ``--opponent`` at 1 and 3 (the
two swapped every other game) and, at each bid ``--player`` makes with a choice in a deal of
``--sizes`` cards, plays the deal on from that bid four ways, with the cards as really dealt:

- ``policy``: every seat by the playout policy, which is what the search foresees on the real
  cards;
- ``bidder_real``: the bidder by ``--player``, the others by the policy;
- ``others_real``: the others by their players, the bidder by the policy;
- ``real``: every seat by its player.

Prints one JSON object: for each way, the bidder's mean bid and tricks, and how often it took
exactly its bid or more. A way that takes more tricks than ``policy`` is one the playouts do
not see coming. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardtable.bots.registry import strategy_by_name
from cardtable.bots.search import PLAYOUT_POLICIES
from cardtable.bots.strategy import Strategy
from cardtable.engine.actions import Action, parse_action
from cardtable.engine.game import GameState
from cardtable.engine.games.whist.rules import BID_PHASE, WhistState
from cardtable.engine.registry import game_spec
from cardtable_tools.player_spec import parse_player
from cardtable_tools.tournament import Board

PLAYERS = 4
#: Which side plays by its real player in each way; the other side plays by the policy.
WAYS: Mapping[str, frozenset[str]] = {
    "policy": frozenset(),
    "bidder_real": frozenset({"bidder"}),
    "others_real": frozenset({"others"}),
    "real": frozenset({"bidder", "others"}),
}


@dataclass(frozen=True)
class BidPosition:
    """A bid ``--player`` made, with the state just before it."""

    state: WhistState
    seat: int
    bid: Action
    #: Which side each seat plays for: ``player`` or ``opponent``.
    sides: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    bid: int
    tricks: int


def seating(game_number: int) -> tuple[str, ...]:
    """The player's seats and the opponent's, swapped every other game."""
    first = ("player", "opponent") if game_number % 2 == 0 else ("opponent", "player")
    return first * (PLAYERS // 2)


def collect_bids(
    make: Callable[[str], Strategy],
    games: int,
    seed: int,
    sizes: frozenset[int],
    progress: bool = False,
) -> list[BidPosition]:
    """Play ``games`` games and keep each bid of the player's with a choice in a deal of
    ``sizes`` cards."""
    spec = game_spec("whist")
    positions: list[BidPosition] = []
    for number in range(games):
        sides = seating(number)
        strategies = {side: make(side) for side in set(sides)}
        board = Board(spec, PLAYERS, f"{seed}/{number}")
        rngs = [random.Random(f"{seed}/{number}/{seat}") for seat in range(PLAYERS)]
        state = spec.new_game(PLAYERS, None, board.first_dealer)
        assert isinstance(state, WhistState)
        deals = 0
        while not state.is_over():
            if state.needs_deal():
                state.deal(board.deck_order(deals))
                deals += 1
                continue
            seat = state.to_act()[0]
            kept = (
                sides[seat] == "player"
                and state.phase == BID_PHASE
                and state.cards_each in sizes
                and len(state.legal_actions(seat)) > 1
            )
            text = strategies[sides[seat]].choose(state.observation(seat), rngs[seat])
            action = parse_action(text)
            if kept:
                positions.append(BidPosition(state.clone(), seat, action, sides))
            state.apply(seat, action)
        if progress:
            print(
                f"playout_fidelity: game {number + 1}/{games}, {len(positions)} bids",
                file=sys.stderr,
            )
    return positions


def play_on(
    position: BidPosition,
    real_sides: frozenset[str],
    make: Callable[[str], Strategy],
    playout: str,
    seed: str,
) -> Outcome:
    """The bidder's tricks when the deal is played on from its bid, the sides in ``real_sides``
    by their players (made afresh) and the rest by the playout policy."""
    state: GameState = position.state.clone()
    bidder = position.seat
    deals = len(state.deal_scores)
    state.apply(bidder, position.bid)
    policy = PLAYOUT_POLICIES[playout]
    rngs = [random.Random(f"{seed}/{seat}") for seat in range(PLAYERS)]
    strategies = {side: make(side) for side in set(position.sides)}
    while len(state.deal_scores) == deals:
        seat = state.to_act()[0]
        if ("bidder" if seat == bidder else "others") in real_sides:
            text = strategies[position.sides[seat]].choose(state.observation(seat), rngs[seat])
            action = parse_action(text)
        else:
            action = policy(state, seat, rngs[seat])
        state.apply(seat, action)
    assert isinstance(state, WhistState)
    return Outcome(position.bid.number, state.tricks_won[bidder])


def measure(
    positions: Sequence[BidPosition],
    make: Callable[[str], Strategy],
    playout: str,
    seed: int,
    progress: bool = False,
) -> dict[str, list[Outcome]]:
    """Each way's outcome at each position, in order."""
    outcomes: dict[str, list[Outcome]] = {way: [] for way in WAYS}
    for index, position in enumerate(positions):
        for way, real_sides in WAYS.items():
            outcome = play_on(position, real_sides, make, playout, f"{seed}/{index}")
            outcomes[way].append(outcome)
        if progress and (index + 1) % 20 == 0:
            print(f"playout_fidelity: {index + 1}/{len(positions)} bids played on", file=sys.stderr)
    return outcomes


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    return {
        "bid": round(statistics.fmean(outcome.bid for outcome in outcomes), 3),
        "tricks": round(statistics.fmean(outcome.tricks for outcome in outcomes), 3),
        "exact": round(statistics.fmean(outcome.tricks == outcome.bid for outcome in outcomes), 3),
        "over": round(statistics.fmean(outcome.tricks > outcome.bid for outcome in outcomes), 3),
    }


def maker(player: str, opponent: str) -> Callable[[str], Strategy]:
    """Makes a fresh strategy for a side, from its command-line name."""
    specs = {"player": parse_player(player), "opponent": parse_player(opponent)}

    def make(side: str) -> Strategy:
        name, options = specs[side]
        return strategy_by_name(name, **options)

    return make


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--player", default="hard:budget_ms=50", help="the bidder's side")
    parser.add_argument("--opponent", default="search:budget_ms=20")
    parser.add_argument("--playout", choices=sorted(PLAYOUT_POLICIES), default="keen")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--sizes", default="8", help="deal sizes, in cards, whose bids count: e.g. 7,8"
    )
    args = parser.parse_args(argv)
    sizes = frozenset(int(size) for size in args.sizes.split(","))
    make = maker(args.player, args.opponent)
    positions = collect_bids(make, args.games, args.seed, sizes, progress=True)
    if not positions:
        parser.error("no bids with a choice in deals of those sizes: play more games")
    outcomes = measure(positions, make, args.playout, args.seed, progress=True)
    report: dict[str, Any] = {
        "player": args.player,
        "opponent": args.opponent,
        "playout": args.playout,
        "sizes": sorted(sizes),
        "bids": len(positions),
        "ways": {way: summary(found) for way, found in outcomes.items()},
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
