"""Worlds weighted by what the other seats said: bids, trump taking, contract choices and
Hearts passes.

:mod:`cardtable.bots.determinize` draws the hidden cards uniformly under the hard constraints
(voids, the cards a seat knows the place of). That treats a Whist opponent who bid 4 of 5 as
holding any 5 cards; it surely holds strong ones. This module scores a drawn world by how well
its hidden hands explain the decisions everybody saw, and :class:`WorldSampler` keeps a world
in proportion to that score (sampling importance resampling): it draws a few candidate worlds
and keeps one with probability proportional to its likelihood. Or, weighing by importance, it
keeps every world it draws and gives the search its likelihood as a weight
(:mod:`cardtable.bots.importance`).

The likelihood models the others as playing roughly like the rule-based player, softly, so
that a person who bids by feel still fits worlds near what the rules would have bid:

- **Whist**: a bid of ``b`` tricks is likely when the hand's calibrated estimate of tricks
  (:func:`cardtable.bots.rules.whist.expected_tricks`) is near ``b``: a normal curve of spread
  :data:`BID_SPREAD` tricks.
- **Belote**: taking (or naming) a suit is likely when the hand's value for it reaches the
  rule-based threshold, passing when it does not: a logistic curve of scale
  :data:`TAKE_SCALE`.
- **3-5-8**: the declarer's contract is likely in proportion to how well the hand suits it
  against the other contracts it still had (a softmax over their scaled fitness).
- **Hearts**: the three cards the observer was passed are likely when the passer ranked them
  above the cards it kept by the rule-based player's danger of a card
  (:func:`cardtable.bots.rules.hearts.danger`): each pair of a card passed and a card kept adds
  a logistic term of scale :data:`PASS_SCALE`. The passer's hand before the pass is read as its
  cards this deal plus those it passed; the three it was passed itself are unknown to the
  observer (but when the pass goes across: they are the observer's own), so they stay in.
- **Plays**, in Whist, 3-5-8 and Hearts: each card another seat played, when it had ``n > 1``
  legal cards, is likely when it is the card the rule-based player would have played with the
  hand the world gives it then (:func:`cardtable.bots.rules.whist.card_then`): with
  probability ``a ** (n - 1)`` (``a`` the game's :data:`PLAY_AGREEMENT`), the rest shared by
  the other cards: about how often the search agrees with the rule-based player
  (``cardtable_tools.bench.play_agreement``). A player who ducked, or threw a low card it could
  have won with, is then unlikely to hold what the rules would have won with. (Belote's
  rule-based play reads the whole state, so its plays weigh the worlds through voids only.)

A hand is read as a drawn placement gives it: the seat's cards now plus those it played this
deal.
The decisions were made on fewer cards (Belote's first five, 3-5-8's first six); the values are
sums over cards, so the expected value of the unseen subset is the whole hand's value scaled by
the share of cards, which is what is used.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from cardtable.bots.rules import belote as belote_rules
from cardtable.bots.rules import hearts as hearts_rules
from cardtable.bots.rules import three_five_eight as three_five_eight_rules
from cardtable.bots.rules import whist as whist_rules
from cardtable.engine.actions import NAME_TRUMP, TAKE_TRUMP
from cardtable.engine.cards import SUIT_LETTERS, SUIT_OF, SUITS, Card
from cardtable.engine.determinize import HiddenCards, WorldBuilder
from cardtable.engine.game import GameState
from cardtable.engine.games.belote.rules import PLAYERS, BeloteState
from cardtable.engine.games.hearts.rules import HeartsState
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACTS,
    FIRST_CARDS,
    ThreeFiveEightState,
)
from cardtable.engine.games.whist.rules import WhistState
from cardtable.engine.hidden import Play, deal_plays

# The spreads and the draws per world were chosen by how often the drawn deals place hidden
# cards right (docs/proving-it.md, "Settings the figures chose").
#: Spread, in tricks, of a Whist bid around the hand's calibrated estimate.
BID_SPREAD = 0.5
#: Scale of the logistic curve of a Belote take or pass around the threshold, in hand value.
TAKE_SCALE = 0.5
#: Temperature of the softmax over a 3-5-8 declarer's contracts, in units of scaled fitness.
CONTRACT_TEMPERATURE = 0.25
#: Scale of the logistic curve of a Hearts pass: danger a passed card has over a kept one.
PASS_SCALE = 4.0
#: Cards in a Belote hand while the trump is bid.
BELOTE_BIDDING_CARDS = 5
#: Worlds drawn for each one kept when there is something to weigh them by.
CANDIDATES_PER_WORLD = 4
#: Drawing one world consistent with the observation is charged this many playout actions:
#: about what loading one costs. A move's later worlds are copies of its first and cost less;
#: the charge stays, as part of what a budget means.
WORLD_DRAW_UNITS = 20
#: Chance, by game, that another seat with two legal cards played the rule-based player's
#: choice; with ``n`` cards, this to the power ``n - 1``.
PLAY_AGREEMENT: Mapping[str, float] = MappingProxyType({"whist": 0.8, "358": 0.8, "hearts": 0.85})
#: The games whose rule-based card choice reads the worlds' hands (:func:`card_then_for`).
PLAYS_WEIGH = frozenset(PLAY_AGREEMENT)
#: Work, in playout actions, of reading one of the others' plays on one candidate world.
PLAY_READ_UNITS = 1.0


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x > -30 else x


def whist_log_likelihood(
    world: WhistState, observer: int, hands: Sequence[Sequence[Card]]
) -> float:
    """How well the world's hands explain the bids the other seats made."""
    slope, intercept = whist_rules.CALIBRATION[world.cards_each]
    total = 0.0
    for seat, bid in enumerate(world.bids):
        if seat == observer or bid is None:
            continue
        estimate = slope * whist_rules.expected_tricks(
            list(hands[seat]), world.trump, world.num_players
        )
        estimate += intercept
        total -= (bid - estimate) ** 2 / (2 * BID_SPREAD**2)
    return total


def subset_sum(values: Sequence[float], size: int) -> tuple[float, float]:
    """Mean and variance of the sum of ``size`` of ``values`` drawn without replacement.

    A decision made on part of a hand (Belote's first five cards, 3-5-8's first six) is read
    from the whole hand the world gives: its expected value, with the spread of which part it
    was widening the likelihood so that a noisy reading does not weigh as a sure one.

    >>> subset_sum([1.0, 1.0, 1.0], 2), subset_sum([0.0, 2.0], 1)
    ((2.0, 0.0), (1.0, 1.0))
    """
    count = len(values)
    if size >= count:
        return float(sum(values)), 0.0
    mean = sum(values) / count
    spread = sum((value - mean) ** 2 for value in values) / count
    return size * mean, size * (count - size) / (count - 1) * spread


def _belote_margin(hand: Sequence[Card], suit: int, turned: Card, holds_turned: bool) -> float:
    """How far above the taking threshold the five cards bid on were for ``suit``, with the
    turned card, in units of the reading's spread."""
    own = [card for card in hand if not (holds_turned and card == turned)]
    values = [belote_rules.hand_value([card], suit) for card in own]
    mean, variance = subset_sum(values, BELOTE_BIDDING_CARDS)
    value = mean + belote_rules.hand_value([turned], suit)
    return (value - belote_rules.TAKE_AT) / math.sqrt(TAKE_SCALE**2 + variance)


def belote_log_likelihood(
    world: BeloteState, observer: int, hands: Sequence[Sequence[Card]]
) -> float:
    """How well the world's hands explain who passed and who took or named the trump."""
    turned = world.turned_card
    turned_suit = SUIT_OF[turned]
    total = 0.0
    for index, (seat, action) in enumerate(world.bids):
        if seat == observer:
            continue
        hand = hands[seat]
        holds = world.taker == seat
        if index < PLAYERS:
            margin = _belote_margin(hand, turned_suit, turned, holds)
            total += _log_sigmoid(margin if action.kind == TAKE_TRUMP else -margin)
        elif action.kind == NAME_TRUMP:
            named = SUIT_LETTERS.index(action.choice)
            total += _log_sigmoid(_belote_margin(hand, named, turned, holds))
        else:  # a pass in the second round: no other suit was worth naming
            total += sum(
                _log_sigmoid(-_belote_margin(hand, suit, turned, holds))
                for suit in SUITS
                if suit != turned_suit
            )
    return total


def three_five_eight_log_likelihood(
    world: ThreeFiveEightState, observer: int, hands: Sequence[Sequence[Card]]
) -> float:
    """How well the declarer's hand explains the contract it chose among those it had left."""
    declarer = world.declarer
    if declarer == observer or not world.contract:
        return 0.0
    hand = hands[declarer]
    already = set(world.used[declarer]) - {world.contract}
    options = [contract for contract in CONTRACTS if contract not in already]
    readings = {}
    for contract in options:
        values = [three_five_eight_rules.contract_fitness([card], contract) for card in hand]
        mean, variance = subset_sum(values, FIRST_CARDS)
        scale_mean, scale_spread = three_five_eight_rules.fitness_scale(contract)
        readings[contract] = ((mean - scale_mean) / scale_spread, variance / scale_spread**2)
    noise = statistics.fmean(variance for _, variance in readings.values())
    temperature = math.sqrt(CONTRACT_TEMPERATURE**2 + noise)
    logits = [readings[contract][0] / temperature for contract in options]
    top = max(logits)
    norm = top + math.log(sum(math.exp(logit - top) for logit in logits))
    return readings[world.contract][0] / temperature - norm


def hearts_log_likelihood(
    world: HeartsState, observer: int, hands: Sequence[Sequence[Card]]
) -> float:
    """How well the passer's hand explains the three cards it passed to the observer."""
    passed = world.received[observer]
    if not world.pass_offset or not passed:
        return 0.0
    passer = (observer - world.pass_offset) % len(hands)
    own_pass = world.passes[observer] or ()
    # Across, the passer's own three came from the observer: its hand before the pass is exact.
    came_from_observer = (
        set(own_pass) if (passer - world.pass_offset) % len(hands) == observer else set()
    )
    before = [card for card in hands[passer] if card not in came_from_observer] + list(passed)
    kept = [card for card in before if card not in passed]
    danger = {card: hearts_rules.danger(card, before) for card in before}
    return sum(
        _log_sigmoid((danger[given] - danger[card]) / PASS_SCALE)
        for given in passed
        for card in kept
    )


#: A finished trick: its leader, its cards in play order, its winner.
Trick = tuple[int, tuple[Card, ...], int]
#: The rule-based card choice, for the games whose plays weigh the worlds.
CardThen = Callable[[Any, int, list[Card], Sequence[Card], Sequence[Card], Sequence[Trick]], Card]


def card_then_for(world: GameState) -> CardThen | None:
    """How the rule-based player of ``world``'s game chose a card, if it reads as a function
    of the hand, the trick and the tricks before it (Whist, 3-5-8 and Hearts)."""
    if isinstance(world, WhistState):
        return whist_rules.card_then
    if isinstance(world, ThreeFiveEightState):
        return three_five_eight_rules.card_then
    if isinstance(world, HeartsState):
        return hearts_rules.card_then
    return None


def play_log_chance(choices: int, as_the_rules_would: bool, agreement: float) -> float:
    """The log-probability of a play among ``choices`` legal cards, being or not being the
    rule-based player's choice, which a seat with two cards plays with chance ``agreement``.

    >>> round(math.exp(play_log_chance(2, True, 0.8)), 2)
    0.8
    >>> round(math.exp(play_log_chance(3, False, 0.8)), 2)
    0.18
    """
    agreement **= choices - 1
    if as_the_rules_would:
        return math.log(agreement)
    return math.log((1 - agreement) / (choices - 1))


def plays_log_likelihood(
    world: WhistState | ThreeFiveEightState | HeartsState,
    observer: int,
    hands: Sequence[Sequence[Card]],
    plays: Sequence[Play],
    card_then: CardThen,
) -> float:
    """How well the world's hands explain the cards the other seats chose to play.

    ``hands`` are the cards each seat held when the deal's play began; each play is read on
    the hand left then, and only where its player had more than one legal card."""
    left = [sorted(hand) for hand in hands]
    agreement = PLAY_AGREEMENT[world.spec.name]
    total = 0.0
    for play in plays:
        hand = left[play.seat]
        if play.seat != observer:
            legal = world.playable_in(hand, play.trick, play.trick_number)
            if len(legal) > 1 and play.card in legal:
                tricks = world.tricks[: play.trick_number]
                chosen = card_then(world, play.seat, hand, legal, play.trick, tricks)
                total += play_log_chance(len(legal), chosen == play.card, agreement)
        if play.card in hand:
            hand.remove(play.card)
    return total


def log_likelihood(world: GameState, observer: int, hands: Sequence[Sequence[Card]]) -> float:
    """The log-likelihood of what ``observer`` saw the others decide (0: no evidence), were
    ``hands`` the cards each seat held this deal. ``world`` is any state the observation
    allows: only what everybody saw (bids, trump, contract ...) is read from it."""
    if isinstance(world, WhistState):
        return whist_log_likelihood(world, observer, hands)
    if isinstance(world, BeloteState):
        return belote_log_likelihood(world, observer, hands)
    if isinstance(world, ThreeFiveEightState):
        return three_five_eight_log_likelihood(world, observer, hands)
    if isinstance(world, HeartsState):
        return hearts_log_likelihood(world, observer, hands)
    return 0.0


def deal_hands(
    hidden: HiddenCards, placement: Sequence[Sequence[Card]], played: Sequence[Sequence[Card]]
) -> list[list[Card]]:
    """Each seat's cards this deal under ``placement``: known, placed and played.

    The seats' hands are the first places (``cardtable.engine.hidden.Layout``)."""
    return [[*hidden.known[seat], *placement[seat], *played[seat]] for seat in range(len(played))]


def has_evidence(observation: Mapping[str, Any], plays: Sequence[Play] = ()) -> bool:
    """Whether another seat has made a decision this deal that the worlds can be weighed by;
    ``plays`` are the deal's plays, evidence in the games listed in :data:`PLAYS_WEIGH`."""
    seat = observation.get("seat")
    game = observation.get("game")
    if game in PLAYS_WEIGH and any(play.seat != seat for play in plays):
        return True
    if game == "whist":
        return any(
            bid is not None and other != seat for other, bid in enumerate(observation["bids"])
        )
    if game == "belote":
        return any(int(entry["seat"]) != seat for entry in observation.get("bids") or [])
    if game == "358":
        return observation.get("contract") is not None and observation.get("declarer") != seat
    if game == "hearts":
        return bool(observation.get("received"))
    return False


def played_by_seat(plays: Sequence[Play], players: int) -> list[list[Card]]:
    """The cards each seat played among ``plays``, in order."""
    played: list[list[Card]] = [[] for _ in range(players)]
    for play in plays:
        played[play.seat].append(play.card)
    return played


def cards_played_by_seat(observation: Mapping[str, Any], direction: int) -> list[list[Card]]:
    """The cards each seat has played this deal."""
    return played_by_seat(deal_plays(observation, direction), int(observation["players"]))


class WorldSampler:
    """Draws worlds for one move: uniformly, or weighted by :func:`log_likelihood`.

    Weighing reads hands, not states: the candidates are placements, scored against one
    state built for what everybody saw, and only the one kept is built into a state.
    """

    def __init__(
        self,
        observation: Mapping[str, Any],
        hidden: HiddenCards,
        draw_placement: Callable[[HiddenCards, random.Random], list[list[Card]]],
        direction: int,
        weigh: bool,
        candidates: int = CANDIDATES_PER_WORLD,
        importance: bool = False,
    ) -> None:
        self.observation = observation
        self.candidates = candidates
        self.hidden = hidden
        self.draw_placement = draw_placement
        self.observer = int(observation["seat"])
        plays = deal_plays(observation, direction) if weigh else []
        self.weigh = weigh and has_evidence(observation, plays)
        #: Weighing by importance: each world drawn is kept and carries its log-likelihood
        #: (:meth:`draw_weighed`), instead of one of ``candidates`` draws being kept.
        self.importance = importance and self.weigh
        self.played = played_by_seat(plays, int(observation["players"]))
        self.plays = plays if observation.get("game") in PLAYS_WEIGH else []
        self._others_plays = sum(1 for play in self.plays if play.seat != self.observer)
        self._builder = WorldBuilder(observation, hidden)
        self._public: GameState | None = None
        self._card_then: CardThen | None = None

    @property
    def draws_per_world(self) -> int:
        """Placements drawn and weighed for each world kept."""
        return 1 if self.importance or not self.weigh else self.candidates

    @property
    def work_per_world(self) -> int:
        """What a world costs the search, in playout actions: its draws, and reading the
        others' plays on each one."""
        if not self.weigh:
            return WORLD_DRAW_UNITS
        reads = PLAY_READ_UNITS * self._others_plays
        return round(self.draws_per_world * (WORLD_DRAW_UNITS + reads))

    def draw(self, rng: random.Random) -> GameState:
        """A world drawn uniformly, or kept among ``candidates`` in proportion to their
        likelihood."""
        if not self.weigh:
            return self._world(self.draw_placement(self.hidden, rng))
        candidates = [self.draw_placement(self.hidden, rng) for _ in range(self.candidates)]
        logs = [self._log_likelihood(placement) for placement in candidates]
        top = max(logs)
        weights = [math.exp(value - top) for value in logs]
        return self._world(rng.choices(candidates, weights)[0])

    def draw_weighed(self, rng: random.Random) -> tuple[GameState, float]:
        """A world and the log of its weight: with ``importance``, one world drawn uniformly
        and its log-likelihood; else :meth:`draw`'s world, which its draws already weighed
        (0). Weights by importance keep every world drawn, so the worlds cost one draw each
        and follow the whole likelihood, where keeping one of two follows a little of it."""
        if not self.importance:
            return self.draw(rng), 0.0
        placement = self.draw_placement(self.hidden, rng)
        return self._world(placement), self._log_likelihood(placement)

    def _log_likelihood(self, placement: list[list[Card]]) -> float:
        if self._public is None:
            self._public = self._world(placement)
            self._card_then = card_then_for(self._public) if self.plays else None
        public = self._public
        hands = deal_hands(self.hidden, placement, self.played)
        total = log_likelihood(public, self.observer, hands)
        if self._card_then is not None:
            assert isinstance(public, WhistState | ThreeFiveEightState | HeartsState)
            total += plays_log_likelihood(public, self.observer, hands, self.plays, self._card_then)
        return total

    def _world(self, placement: list[list[Card]]) -> GameState:
        return self._builder.build(placement)
