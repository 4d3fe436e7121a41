"""How far a player's moves fall from the search's own objective weighed over many worlds.

    python -m cardtable_tools.bench.search_regret --game hearts \\
        --player search:budget_ms=50 --player search:budget_ms=200 --player hard:budget_ms=50

A tournament takes an hour a game to see a difference of a few points; this takes minutes.
It takes positions (where the seat has a choice of cards; with ``--phase bid``, of bids; with
``--phase contract``, of 3-5-8 contracts; with ``--phase exchange``, of the 3-5-8 creditor's
gives) from games the rule-based player plays, and for each
weighs every legal move over ``--oracle-worlds`` worlds drawn as hard draws them, each played
out as the search plays them out: that is the objective every search configuration estimates,
known almost exactly (interchangeable cards share their mean: the game cannot tell them
apart). A player's *regret* at a position is the best move's value minus the value of the
move it chose, in the game's points; its mean over the positions (each played with ``--seeds``
rngs) shows how much of the objective a budget's noise costs, and the work it spent a move.
Players keep their state from one position to the next, in the order given, as a seat's moves
do (the adaptive search banks what clear moves leave).

It measures noise, not strength against people: a player with a better objective (another
playout, another model of the others) is not scored better here. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cardtable.bots.beliefs import WorldSampler
from cardtable.bots.card_plays import chooses_a_card
from cardtable.bots.determinize import sample_placement
from cardtable.bots.observation import normalise_observation
from cardtable.bots.random_play import shuffled_deck
from cardtable.bots.registry import strategy_by_name
from cardtable.bots.rules import rules_action
from cardtable.bots.search import (
    WORK_UNITS_PER_MS,
    SearchStrategy,
    evaluate,
    rules_policy,
)
from cardtable.bots.strategy import Strategy
from cardtable.engine.actions import PLAY, Action, format_action, parse_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.registry import game_spec
from cardtable_tools.player_spec import parse_player

#: Chance that a position with a choice of cards is taken: spreads them over the deal.
TAKE_CHANCE = 0.12
#: The phases of each game whose decisions are listed actions (Hearts' pass is a set of cards).
PHASES_WITH_CHOICES = {
    "whist": ("play", "bid"),
    "belote": ("play", "bid"),
    "358": ("play", "contract", "exchange"),
    "hearts": ("play",),
}
#: A progress line on stderr every this many positions weighed.
PROGRESS_EVERY = 10


def choice_positions(
    game: str, players: int, count: int, rng: random.Random, phase: str = "play"
) -> list[GameState]:
    """``count`` states of games the rule-based player plays where the seat to act has a choice
    of listed actions in ``phase`` (cards in ``play``; bids, contracts, gives) (each a clone)."""
    spec = game_spec(game)
    found: list[GameState] = []
    while len(found) < count:
        state = spec.new_game(players, None, rng.randrange(players))
        while not state.is_over() and len(found) < count:
            if state.needs_deal():
                state.deal(shuffled_deck(state, rng))
                continue
            seat = state.to_act()[0]
            has_choice = state.phase == phase and len(state.legal_actions(seat)) > 1
            if has_choice and rng.random() < TAKE_CHANCE:
                found.append(state.clone())
            state.apply(seat, rules_action(state, seat))
    return found


def move_values(state: GameState, worlds: int, rng: random.Random) -> dict[str, float]:
    """Every legal move's mean value over ``worlds`` worlds drawn as hard draws them, each
    played out by the rule-based player and valued with the game's outlook."""
    seat = state.to_act()[0]
    view = normalise_observation(state.observation(seat))
    direction = game_spec(str(view["game"])).direction
    sampler = WorldSampler(view, hidden_cards(view), sample_placement, direction, True)
    moves = [parse_action(str(text)) for text in view["legal_actions"]]
    totals = [0.0] * len(moves)
    for _ in range(worlds):
        world = sampler.draw(rng)
        for index, move in enumerate(moves):
            totals[index] += evaluate(world, seat, move, rules_policy, rng, plan_game=True)[0]
    means = {move: total / worlds for move, total in zip(moves, totals, strict=True)}
    return {format_action(move): value for move, value in as_one_move(state, means).items()}


def as_one_move(state: GameState, values: Mapping[Action, float]) -> dict[Action, float]:
    """Each group of interchangeable cards (:mod:`cardtable.engine.interchangeable`) at the
    group's mean value: in the game they are one move, and what parts them in the playouts is
    the rule-based player's choices among its other cards, which would otherwise count as the
    regret of the player that weighs one card of the group."""
    moves = list(values)
    if not chooses_a_card(moves):
        return dict(values)
    seat = state.to_act()[0]
    evened = dict(values)
    for group in state.interchangeable_plays(seat, [move.card for move in moves]):
        mean = statistics.fmean(values[PLAY[card]] for card in group)
        for card in group:
            evened[PLAY[card]] = mean
    return evened


@dataclass
class Regret:
    """A player's regret and work over the positions."""

    regrets: list[float]
    work_ms: list[float]

    def report(self) -> dict[str, float]:
        spread = statistics.stdev(self.regrets) if len(self.regrets) > 1 else 0.0
        return {
            "regret": round(statistics.fmean(self.regrets), 4),
            "standard_error": round(spread / math.sqrt(len(self.regrets)), 4),
            "work_ms_a_move": round(statistics.fmean(self.work_ms), 1),
            "most_work_ms": round(max(self.work_ms), 1),
        }


def measure_regret(
    player: Strategy,
    positions: Sequence[GameState],
    values: Sequence[Mapping[str, float]],
    seeds: int,
) -> Regret:
    """``player``'s regret at each position, once per rng seed (all of one seed's positions
    before the next, as a seat plays its moves in order)."""
    regret = Regret([], [])
    for seed in range(seeds):
        for state, moves in zip(positions, values, strict=True):
            seat = state.to_act()[0]
            chosen = player.choose(state.observation(seat), random.Random(seed))
            regret.regrets.append(max(moves.values()) - moves[chosen])
            work = player.last_work if isinstance(player, SearchStrategy) else 0
            regret.work_ms.append(work / WORK_UNITS_PER_MS)
    return regret


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=["whist", "358", "belote", "hearts"], default="hearts")
    parser.add_argument("--players", type=int, default=0, help="default: the game's usual")
    parser.add_argument("--player", action="append", default=[], help="name[:key=value,...]")
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--oracle-worlds", type=int, default=800)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--phase",
        default="play",
        help="where positions are taken: play (default), bid, contract, exchange",
    )
    args = parser.parse_args(argv)
    if args.phase not in PHASES_WITH_CHOICES[args.game]:
        phases = ", ".join(PHASES_WITH_CHOICES[args.game])
        parser.error(f"{args.game} has listed choices in these phases only: {phases}")
    players = args.players or (3 if args.game == "358" else 4)
    named = [parse_player(text) for text in args.player or ["search:budget_ms=50"]]
    rng = random.Random(args.seed)
    positions = choice_positions(args.game, players, args.positions, rng, args.phase)
    values = []
    for number, state in enumerate(positions, start=1):
        values.append(move_values(state, args.oracle_worlds, rng))
        if number % PROGRESS_EVERY == 0 or number == len(positions):
            print(f"search_regret: weighed {number}/{len(positions)} positions", file=sys.stderr)
    report = {}
    for text, (name, options) in zip(args.player or ["search:budget_ms=50"], named, strict=True):
        regret = measure_regret(strategy_by_name(name, **options), positions, values, args.seeds)
        report[text] = regret.report()
        print(f"search_regret: {text} {report[text]}", file=sys.stderr)
    summary = {"game": args.game, "phase": args.phase, "positions": len(positions)}
    print(json.dumps({**summary, "players": report}))


if __name__ == "__main__":
    main()
