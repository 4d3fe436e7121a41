"""The ``search`` strategy: determinized Monte Carlo search within a work budget per move.

For each move it repeats, until the budget is spent: draw one deal consistent with everything
the seat has seen (:mod:`cardtable.bots.determinize`), build the whole state through the engine,
and for every candidate action play a copy of that state to the end of the deal with the
playout policy (the rule-based player by default). Each candidate is scored by the seat's
result for the deal against the others (its score minus the others' mean, oriented so higher is
better: points count against in Hearts, and in Belote the seat's score is its team's), averaged
over the deals drawn; the best average wins. Every candidate meets the same deals, so their
differences are not swamped by the luck of the draw.

With ``adaptive`` the budget is an average: a candidate leaves once it is clearly behind the
leader (:mod:`cardtable.bots.racing`), the move ends when one is left, and what it did not spend
goes to the seat's later, closer moves (:mod:`cardtable.bots.budget`).

It is given the observation only, never the real state, so it cannot look at hidden cards.

The budget is counted in work, not in time. ``budget_ms`` is converted once into *work units*
(:data:`WORK_UNITS_PER_MS`): one unit is one action applied in a playout, and drawing a world
costs what :attr:`~cardtable.bots.beliefs.WorldSampler.work` counts. The search stops
after the first world that brings its work to the budget. A wall-clock budget would make the
strength depend on the machine's load: on a busy host the same ``budget_ms`` would draw fewer
worlds, so the player would get weaker exactly when the service is under pressure, and no two
runs of a seeded tournament would agree. CPU time
(``time.process_time``/``thread_time``) would remove most of the load's effect but not all
(caches and frequency scaling still move it), and it is still not reproducible: two runs draw
a different number of worlds. Work is both: the same observation, rng and budget give the same
worlds and the same move on any machine, under any load, in a worker process or not, so a
seeded tournament reproduces exactly and tests can assert on moves. What it gives up is that
the wall time of a move now follows the machine (slower when busy); the table's turn timer,
not the search, is what bounds a seat's wall time. The rate is fixed, so a budget names the
same work however fast the code gets; ``python -m cardtable_tools.bench.search_speed``
measures how long that work takes on a machine (figures in docs/proving-it.md).

>>> SearchStrategy(budget_ms=10).work_budget
1500
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from cardtable.bots.beliefs import CANDIDATES_PER_WORLD, HandReadings, WorldSampler
from cardtable.bots.budget import WorkBank
from cardtable.bots.card_plays import chooses_a_card, one_of_each_kind
from cardtable.bots.determinize import sample_placement
from cardtable.bots.endgame import EndgameSolver, most_cards_held
from cardtable.bots.importance import DEFAULT_IMPORTANCE_POWER, WorldWeights
from cardtable.bots.observation import acting_seat, normalise_observation
from cardtable.bots.outlook import advantage_over_others, oriented, outlook
from cardtable.bots.racing import clearly_ahead, leader, still_in_race
from cardtable.bots.random_play import random_action
from cardtable.bots.rules import keen_action, pushing_action, rules_action, set_alternatives
from cardtable.bots.trick_model import (
    ESTIMATE_UNITS,
    cut_after,
    cut_here,
    estimated_deal_scores,
)
from cardtable.engine.actions import Action, format_action, parse_action
from cardtable.engine.determinize import hidden_cards
from cardtable.engine.game import GameState
from cardtable.engine.registry import game_spec

#: Chooses the action of the seat to act in a playout.
PlayoutPolicy = Callable[[GameState, int, random.Random], Action]

DEFAULT_BUDGET_MS = 200.0
#: Work units a millisecond of budget buys: what one quiet core did with the rules playout
#: when budgets were sized. Fixed, as it is part of what every level's budget means; one rate
#: for the four games keeps that meaning the same in each, whatever their speeds.
WORK_UNITS_PER_MS = 150
#: For a compound action (pass three, discard four) the rule-based choice and a few variants
#: of it, one card swapped, are the candidates: listing every combination is out of reach.
DEFAULT_SET_CANDIDATES = 6


def rules_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return rules_action(state, seat)


def random_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return random_action(state, seat, rng)


def keen_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return keen_action(state, seat)


def push_policy(state: GameState, seat: int, rng: random.Random) -> Action:
    return pushing_action(state, seat)


PLAYOUT_POLICIES: dict[str, PlayoutPolicy] = {
    "rules": rules_policy,
    "keen": keen_policy,
    "push": push_policy,
    "random": random_policy,
}


def deal_advantage(scores: Sequence[float], seat: int, lower_is_better: bool) -> float:
    """The seat's deal score minus the mean of the others', higher is better in every game."""
    return advantage_over_others(oriented(scores, lower_is_better), seat)


def evaluate(
    world: GameState,
    seat: int,
    action: Action,
    policy: PlayoutPolicy,
    rng: random.Random,
    plan_game: bool = False,
    endgame_cards: int = 0,
    cut_tricks: int = 0,
    contract_sets: bool = False,
) -> tuple[float, int]:
    """Apply ``action`` to a copy of ``world`` and play the deal out with ``policy``: the
    seat's deal advantage (plus, with ``plan_game``, what the deal's end is worth to the rest
    of the game: :func:`cardtable.bots.outlook.outlook`), and the actions applied (the work it
    cost). The action itself may end the deal (the last pass in Belote). Once no seat holds
    more than ``endgame_cards`` cards (0: never), the deal's last tricks are played exactly
    (:mod:`cardtable.bots.endgame`), every card tried counted as work. With ``cut_tricks`` the
    playout of a 3-5-8 deal other than the last stops once the current trick and that many more
    are played, and the tricks left are estimated (:mod:`cardtable.bots.trick_model`).
    ``contract_sets`` values a 3-5-8 seat's contracts left as a set in the outlook."""
    state = world.clone()
    deals = len(state.deal_scores)
    cut = cut_after(state, cut_tricks)
    state.apply(seat, action)
    solver = EndgameSolver() if endgame_cards else None
    applied = 1
    while len(state.deal_scores) == deals:
        if cut is not None and cut_here(state, cut):
            scores = estimated_deal_scores(state)
            value = deal_advantage(scores, seat, state.spec.lower_is_better)
            if plan_game:
                value += outlook(state, seat, contract_sets)
            return value, applied + ESTIMATE_UNITS
        if solver is not None and (most_cards_held(state) or 0) <= endgame_cards:
            tried = solver.applied
            line = solver.solve(state)
            if line is not None:
                state = line.end
                break
            if solver.applied > tried:
                # A decision other than a card inside the ending (a declaration): the
                # playout plays this deal on.
                solver = None
        actor = state.to_act()[0]
        # the policies choose among the legal actions (tests play them through the check)
        state.apply_trusted(actor, policy(state, actor, rng))
        applied += 1
    if solver is not None:
        applied += solver.applied
    value = deal_advantage(state.deal_scores[-1], seat, state.spec.lower_is_better)
    if plan_game:
        value += outlook(state, seat, contract_sets)
    return value, applied


def in_game(option: bool | Collection[str], game: str) -> bool:
    """Whether an option given for every game (a bool) or for those named is on in ``game``."""
    if isinstance(option, bool):
        return option
    return game in option


class SearchStrategy:
    """Determinized Monte Carlo search over the seat's legal actions.

    ``budget_ms`` is the work per move, in milliseconds of a quiet calibration core (see the
    module's docstring); ``worlds`` instead fixes how many deals are drawn. Either way the move
    is a function of the observation and the rng alone.
    """

    name = "search"

    def __init__(
        self,
        budget_ms: float = DEFAULT_BUDGET_MS,
        worlds: int | None = None,
        playout: str = "rules",
        set_candidates: int = DEFAULT_SET_CANDIDATES,
        weigh_worlds: bool | Collection[str] = False,
        plan_game: bool | Collection[str] = False,
        adaptive: bool = False,
        merge_interchangeable: bool = False,
        race_contracts: bool = True,
        weigh_contracts: bool | Collection[str] = True,
        contract_margin_z: float = 0.0,
        world_candidates: int | Mapping[str, int] = CANDIDATES_PER_WORLD,
        endgame_cards: int = 0,
        contract_playout: str | None = None,
        importance: bool | Collection[str] = False,
        importance_power: float = DEFAULT_IMPORTANCE_POWER,
        set_alternatives: bool | Collection[str] = False,
        cut_tricks: int = 0,
        contract_sets: bool = False,
        keep_readings: bool | Collection[str] = False,
    ) -> None:
        for name in (playout, contract_playout or playout):
            if name not in PLAYOUT_POLICIES:
                names = ", ".join(PLAYOUT_POLICIES)
                raise ValueError(f"unknown playout policy {name!r}: use one of {names}")
        if contract_margin_z < 0:
            raise ValueError("the contract margin is a number of standard errors, 0 or more")
        counts = (
            world_candidates.values()
            if isinstance(world_candidates, Mapping)
            else [world_candidates]
        )
        if any(count < 2 or count != int(count) for count in counts):
            raise ValueError("a world kept is chosen among 2 or more drawn: a whole number")
        if set_candidates < 1 or set_candidates != int(set_candidates):
            raise ValueError("the candidates for a set of cards are a whole number, 1 or more")
        if endgame_cards < 0 or endgame_cards != int(endgame_cards):
            raise ValueError("the cards a hand holds for the exact ending are a whole number")
        if cut_tricks < 0 or cut_tricks != int(cut_tricks):
            raise ValueError("the tricks a playout plays past the current one are a whole number")
        if not 0 < importance_power <= 1:
            raise ValueError("the power of the importance weights is above 0 and at most 1")
        if budget_ms <= 0 or (worlds is not None and worlds < 1):
            raise ValueError("the budget and the number of worlds must be positive")
        self.budget_ms = float(budget_ms)
        self.work_budget = max(1, round(self.budget_ms * WORK_UNITS_PER_MS))
        self.worlds = worlds
        self.playout = playout
        self.policy = PLAYOUT_POLICIES[playout]
        #: The playout a bid or contract choice is weighed with (by default ``playout``): a
        #: contract is made against how the others will really play the whole deal, which a
        #: playout may foresee better than it plays cards.
        self.contract_playout = contract_playout or playout
        self.contract_policy = PLAYOUT_POLICIES[self.contract_playout]
        # Command lines read numbers as floats (``hard:set_candidates=10``).
        self.set_candidates = int(set_candidates)
        #: Weigh, beside the rule-based set of cards and its variants, the sets of other kinds
        #: the rule-based player offers (Hearts: a pass for the moon, passes that empty a short
        #: suit): in every game, or in those named.
        self.set_alternatives = set_alternatives
        #: Draw worlds in proportion to how well they explain the others' bids and contracts
        #: (:mod:`cardtable.bots.beliefs`), not uniformly: in every game, or in those named.
        self.weigh_worlds = weigh_worlds
        #: Value a deal's end for the rest of the game too (:mod:`cardtable.bots.outlook`): in
        #: every game, or in those named.
        self.plan_game = plan_game
        #: Drop candidates once clearly behind (:mod:`cardtable.bots.racing`) and keep what a
        #: clear move leaves of its budget for the seat's close ones (:mod:`cardtable.bots.budget`):
        #: ``budget_ms`` is then the work a move on average, at most a few times it on one move.
        self.adaptive = adaptive
        #: Weigh one card of each group of interchangeable ones (touching cards of equal
        #: points, :mod:`cardtable.engine.interchangeable`): the others would split the budget
        #: with it for a difference that is only the playout policy's.
        self.merge_interchangeable = merge_interchangeable
        #: With ``adaptive``, race bids and contract choices too; off, they spend the whole
        #: allowance the bank gives a move, as a contract decides the deal's every card.
        self.race_contracts = race_contracts
        #: With ``weigh_worlds``, draw a bid's or contract choice's worlds weighted too (in
        #: every game, or in those named); off, they are drawn uniformly and only card plays
        #: are weighed.
        self.weigh_contracts = weigh_contracts
        #: A bid or contract choice other than the rule-based one is made only when it beats
        #: that one by this many standard errors, world by world: with few worlds and many
        #: bids, the best-looking bid is most often the one whose worlds happened to be kind.
        self.contract_margin_z = float(contract_margin_z)
        #: With ``weigh_worlds``, the deals drawn for each one kept (for every game, or by game):
        #: more place the hidden cards better, and each costs the search a draw and its reading
        #: of the others' plays.
        self.world_candidates: int | Mapping[str, int] = (
            {game: int(count) for game, count in world_candidates.items()}
            if isinstance(world_candidates, Mapping)
            else int(world_candidates)
        )
        #: Play each playout's last tricks exactly once no hand holds more than this many
        #: cards (:mod:`cardtable.bots.endgame`): 0 leaves every card to the playout policy.
        self.endgame_cards = int(endgame_cards)  # command lines read numbers as floats
        #: In a 3-5-8 card play, stop each playout once the current trick and this many more
        #: are played and estimate the rest (:mod:`cardtable.bots.trick_model`): 0 plays every
        #: deal out. The deal's last tricks decide little between two cards now and cost most
        #: of a playout, so the same work buys several times the worlds.
        self.cut_tricks = int(cut_tricks)
        #: With ``plan_game``, value a 3-5-8 seat's contracts still to play as a set, for what
        #: a declarer choosing among them makes of them (:mod:`cardtable.bots.contract_sets`),
        #: not each at its forced value.
        self.contract_sets = contract_sets
        #: With ``weigh_worlds``, weigh each world drawn by its likelihood (in every game, or in
        #: those named) instead of keeping one of ``world_candidates`` draws: a world then costs
        #: one draw, and the worlds follow the whole likelihood, to this power.
        self.importance = importance
        #: Below 1 it flattens the weights, trading part of what they say for more worlds that
        #: count: the likelihood models the others as the rule-based player, which they are not.
        self.importance_power = float(importance_power)
        #: With ``weigh_worlds``, keep what the others' decisions and plays said of each hand
        #: the worlds gave them, from world to world and move to move of a deal
        #: (:class:`~cardtable.bots.beliefs.HandReadings`), in every game or in those named: a
        #: world then costs its draw and what was not read on its hands before, and the work
        #: that leaves buys more worlds. The worlds are those reading afresh would draw.
        self.keep_readings = keep_readings
        self._readings: dict[int, HandReadings] = {}
        self.bank = WorkBank(self.work_budget) if adaptive and worlds is None else None
        #: Deals drawn for the last move and the work units they cost, for benchmarks and logs.
        self.last_worlds = 0
        self.last_work = 0
        #: Of ``last_work``, what drawing the worlds (and reading the others' plays on them) cost.
        self.last_world_work = 0

    def choose(self, observation: Mapping[str, Any], rng: random.Random) -> str:
        view = normalise_observation(observation)
        seat = acting_seat(view)
        listed = [str(action) for action in view.get("legal_actions") or []]
        self.last_worlds = self.last_work = self.last_world_work = 0
        if len(listed) == 1:
            return listed[0]
        hidden = hidden_cards(view)
        game = str(view["game"])
        actions = [parse_action(text) for text in listed]
        card_play = chooses_a_card(actions)
        weighs = in_game(self.weigh_worlds, game) and (
            in_game(self.weigh_contracts, game) or card_play
        )
        direction = game_spec(game).direction
        sampler = WorldSampler(
            view,
            hidden,
            sample_placement,
            direction,
            weighs,
            self.candidates_per_world(game),
            importance=in_game(self.importance, game),
            readings=self._readings.setdefault(seat, HandReadings())
            if in_game(self.keep_readings, game)
            else None,
        )
        world, log_weight = sampler.draw_weighed(rng)
        candidates = actions if actions else self._set_candidates(world, seat, rng, game)
        if len(candidates) == 1:
            return format_action(candidates[0])
        # The rule-based choice goes first, so that it wins ties.
        preferred = rules_action(world, seat)
        if preferred in candidates:
            candidates.remove(preferred)
            candidates.insert(0, preferred)
        if self.merge_interchangeable:
            candidates = one_of_each_kind(world, seat, candidates)
            if len(candidates) == 1:
                # A choice among cards that are one: a decision that was clear, so it banks.
                self.last_worlds, self.last_work = 0, sampler.work
                self.last_world_work = sampler.work
                if self.bank:
                    self.bank.settle(seat, sampler.work)
                return format_action(candidates[0])
        plans = in_game(self.plan_game, game)
        cut_tricks = self.cut_tricks if card_play else 0
        policy = self.policy if card_play or not actions else self.contract_policy
        races = self.adaptive and (self.race_contracts or card_play)
        allowance = self.bank.allowance(seat) if self.bank else self.work_budget
        values: list[list[float]] = [[] for _ in candidates]
        weights = WorldWeights(self.importance_power) if sampler.importance else None
        alive = list(range(len(candidates)))
        drawn, playout_work = 0, 0
        while True:
            for index in alive:
                advantage, applied = evaluate(
                    world,
                    seat,
                    candidates[index],
                    policy,
                    rng,
                    plans,
                    self.endgame_cards,
                    cut_tricks,
                    self.contract_sets,
                )
                values[index].append(advantage)
                playout_work += applied
            if weights is not None:
                weights.add(log_weight)
            drawn += 1
            if self.worlds is not None:
                if drawn >= self.worlds:
                    break
            elif playout_work + sampler.work >= allowance:
                break
            if races:
                alive = still_in_race(alive, values, weights=weights)
                if len(alive) == 1:
                    break
            world, log_weight = sampler.draw_weighed(rng)
        work = playout_work + sampler.work
        self.last_worlds, self.last_work = drawn, work
        self.last_world_work = sampler.work
        if self.bank:
            self.bank.settle(seat, work)
        chosen = leader(alive, values, weights)
        margin = self.contract_margin_z if actions and not card_play else 0.0
        stands = (
            not margin
            or chosen == 0
            or 0 not in alive
            or clearly_ahead(values[chosen], values[0], margin, weights)
        )
        return format_action(candidates[chosen if stands else 0])

    def candidates_per_world(self, game: str) -> int:
        """Deals drawn for each world kept in ``game``: the count given for every game, or the
        one given for ``game`` (:data:`CANDIDATES_PER_WORLD` where none is)."""
        if isinstance(self.world_candidates, Mapping):
            return self.world_candidates.get(game, CANDIDATES_PER_WORLD)
        return self.world_candidates

    def _set_candidates(
        self, world: GameState, seat: int, rng: random.Random, game: str
    ) -> list[Action]:
        """The rule-based choice of cards, with ``set_alternatives`` the rule-based player's
        sets of other kinds, and variants of the first with one card swapped for another."""
        choice = world.card_set_choice(seat)
        base = rules_action(world, seat)
        if choice is None:
            return [base]
        chosen = list(base.cards)
        others = [card for card in choice.cards if card not in chosen]
        swaps = [(out, into) for out in range(len(chosen)) for into in others]
        rng.shuffle(swaps)
        candidates = [base]
        if in_game(self.set_alternatives, game):
            candidates += set_alternatives(world, seat)  # never the rule-based set itself
        wanted = len(candidates) + max(self.set_candidates - 1, 0)
        for out, into in swaps:
            if len(candidates) >= wanted:
                break
            variant = list(chosen)
            variant[out] = into
            swapped = choice.make(variant)
            if swapped not in candidates:  # an alternative may be one card from the rule's
                candidates.append(swapped)
        return candidates
