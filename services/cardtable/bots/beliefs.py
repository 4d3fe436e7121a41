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

Every term reads one seat's hand, so a world's likelihood is a sum of a term a seat, and a
seat's term for a hand can be kept (:class:`HandReadings`): late in a deal the hands the worlds
give a seat are few, and a search keeping them reads each hand's decisions once and, at each
later move, only the plays made since.
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
#: With readings kept (:class:`HandReadings`), what a placement drawn costs, reading one
#: seat's decisions but plays on a hand not read before (by game: a 3-5-8 contract weighs
#: each card for six contracts, a Whist bid counts tricks once), and building the world kept,
#: in playout actions, at or above what ``cardtable_tools.bench.draw_costs`` times them at.
PLACEMENT_UNITS = 8
HAND_READ_UNITS: Mapping[str, int] = MappingProxyType(
    {"whist": 1, "358": 2, "belote": 1, "hearts": 2}
)
WORLD_BUILD_UNITS = 8


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x > -30 else x


def whist_log_likelihood(world: WhistState, seat: int, hand: Sequence[Card]) -> float:
    """How well ``hand`` explains the bid ``seat`` made."""
    bid = world.bids[seat]
    if bid is None:
        return 0.0
    slope, intercept = whist_rules.CALIBRATION[world.cards_each]
    estimate = slope * whist_rules.expected_tricks(list(hand), world.trump, world.num_players)
    estimate += intercept
    return -((bid - estimate) ** 2) / (2 * BID_SPREAD**2)


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
    card_value = belote_rules.CARD_VALUE[suit]
    values = [card_value[card] for card in own]
    mean, variance = subset_sum(values, BELOTE_BIDDING_CARDS)
    value = mean + card_value[turned]
    return (value - belote_rules.TAKE_AT) / math.sqrt(TAKE_SCALE**2 + variance)


def belote_log_likelihood(world: BeloteState, seat: int, hand: Sequence[Card]) -> float:
    """How well ``hand`` explains ``seat``'s passes and its taking or naming the trump."""
    turned = world.turned_card
    turned_suit = SUIT_OF[turned]
    holds = world.taker == seat
    total = 0.0
    for index, (bidder, action) in enumerate(world.bids):
        if bidder != seat:
            continue
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
    world: ThreeFiveEightState, seat: int, hand: Sequence[Card]
) -> float:
    """How well the declarer's hand explains the contract it chose among those it had left
    (0 for the other seats)."""
    declarer = world.declarer
    if declarer != seat or not world.contract:
        return 0.0
    already = set(world.used[declarer]) - {world.contract}
    options = [contract for contract in CONTRACTS if contract not in already]
    readings = {}
    for contract in options:
        fitness = three_five_eight_rules.CARD_FITNESS[contract]
        values = [fitness[card] for card in hand]
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
    world: HeartsState, observer: int, seat: int, hand: Sequence[Card]
) -> float:
    """How well the passer's hand explains the three cards it passed to the observer (0 for
    the other seats)."""
    passed = world.received[observer]
    players = world.num_players
    if not world.pass_offset or not passed or seat != (observer - world.pass_offset) % players:
        return 0.0
    own_pass = world.passes[observer] or ()
    # Across, the passer's own three came from the observer: its hand before the pass is exact.
    came_from_observer = (
        set(own_pass) if (seat - world.pass_offset) % players == observer else set()
    )
    before = [card for card in hand if card not in came_from_observer] + list(passed)
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
    by_seat = plays_by_seat(plays, observer)
    return sum(
        seat_plays_log_likelihood(world, sorted(hands[seat]), seat_plays, card_then)
        for seat, seat_plays in by_seat.items()
    )


def plays_by_seat(plays: Sequence[Play], observer: int) -> dict[int, list[Play]]:
    """The plays of each seat but ``observer``, in order, by seat (seats without plays left
    out). Each seat's plays are read on its own hand only, so they weigh a world seat by
    seat."""
    by_seat: dict[int, list[Play]] = {}
    for play in plays:
        if play.seat != observer:
            by_seat.setdefault(play.seat, []).append(play)
    return by_seat


def seat_plays_log_likelihood(
    world: WhistState | ThreeFiveEightState | HeartsState,
    hand: list[Card],
    plays: Sequence[Play],
    card_then: CardThen,
) -> float:
    """How well ``hand`` (sorted, the seat's cards before ``plays``; it loses the cards
    played) explains one seat's ``plays``."""
    agreement = PLAY_AGREEMENT[world.spec.name]
    total = 0.0
    for play in plays:
        legal = world.playable_in(hand, play.trick, play.trick_number)
        if len(legal) > 1 and play.card in legal:
            tricks = world.tricks[: play.trick_number]
            chosen = card_then(world, play.seat, hand, legal, play.trick, tricks)
            total += play_log_chance(len(legal), chosen == play.card, agreement)
        if play.card in hand:
            hand.remove(play.card)
    return total


def seat_log_likelihood(world: GameState, observer: int, seat: int, hand: Sequence[Card]) -> float:
    """The log-likelihood of what ``observer`` saw ``seat`` decide (0: no evidence), were
    ``hand`` its cards this deal. ``world`` is any state the observation allows: only what
    everybody saw (bids, trump, contract ...) is read from it."""
    if isinstance(world, WhistState):
        return whist_log_likelihood(world, seat, hand)
    if isinstance(world, BeloteState):
        return belote_log_likelihood(world, seat, hand)
    if isinstance(world, ThreeFiveEightState):
        return three_five_eight_log_likelihood(world, seat, hand)
    if isinstance(world, HeartsState):
        return hearts_log_likelihood(world, observer, seat, hand)
    return 0.0


def log_likelihood(world: GameState, observer: int, hands: Sequence[Sequence[Card]]) -> float:
    """The log-likelihood of what ``observer`` saw the others decide, were ``hands`` the
    cards each seat held this deal: a sum of a term a seat, each read on its own hand."""
    return sum(
        seat_log_likelihood(world, observer, seat, hand)
        for seat, hand in enumerate(hands)
        if seat != observer
    )


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


class HandReadings:
    """What each other seat's decisions this deal (bids, contract, pass, plays) say of the
    hands the worlds give it, kept from world to world and from move to move of a seat's deal.

    Late in a deal a world's weight re-reads every play the others made, while the hands the
    worlds can give a seat are few (its cards left are few): most are hands read before, on
    another world or at an earlier move. Kept, a hand's bid is read once and its plays once
    each, and a later move reads on it only the plays made since. Nothing is approximated: a
    hand's reading is a function of the hand, the public decisions (bids, trump, contract,
    which :meth:`start` is told) and the plays.

    >>> readings = HandReadings()
    >>> readings.start("deal 1", [])
    >>> readings.known
    0
    """

    def __init__(self) -> None:
        self._context: object = None
        self._plays: tuple[Play, ...] = ()
        #: By seat and hand (a bit a card: plain ints, which the garbage collector need not
        #: walk, however many hands a deal reads): the reading of its decisions but plays, the
        #: plays read on it and their log-likelihood.
        self._by_hand: dict[tuple[int, int], tuple[float, int, float]] = {}

    @property
    def known(self) -> int:
        """Hands with a reading kept."""
        return len(self._by_hand)

    def start(self, context: object, plays: Sequence[Play]) -> None:
        """Begin a move in the deal ``context`` names (with its public decisions) after
        ``plays``: the readings kept stand while the context is the same and the plays go on
        from those read; otherwise (a new deal, a new bid) they are dropped."""
        plays = tuple(plays)
        if context != self._context or plays[: len(self._plays)] != self._plays:
            self._by_hand.clear()
            self._context = context
        self._plays = plays

    def read(
        self,
        world: GameState,
        observer: int,
        seat: int,
        hand: Sequence[Card],
        plays: Sequence[Play],
        card_then: CardThen | None,
    ) -> tuple[float, bool, int]:
        """The log-likelihood of ``seat``'s decisions were ``hand`` its cards this deal
        (``plays``: all it played this deal, read with ``card_then`` if given); whether the
        decisions but plays were read now (not kept from before), and how many plays."""
        if card_then is None:
            plays = ()
        key = (seat, sum(1 << card for card in hand))
        kept = self._by_hand.get(key)
        if kept is None:
            decided, done, played = seat_log_likelihood(world, observer, seat, hand), 0, 0.0
        else:
            decided, done, played = kept
        if card_then is not None and done < len(plays):
            assert isinstance(world, WhistState | ThreeFiveEightState | HeartsState)
            left = sorted(hand)
            for play in plays[:done]:
                if play.card in left:
                    left.remove(play.card)
            played += seat_plays_log_likelihood(world, left, plays[done:], card_then)
        if kept is None or done < len(plays):
            self._by_hand[key] = (decided, len(plays), played)
        return decided + played, kept is None, max(len(plays) - done, 0)


#: What a hand's reading depends on besides the hand and the plays (the game, the deal and its
#: public decisions), as an observation names it: readings kept stand while these stay the same.
READING_CONTEXT = (
    "game",
    "options",
    "deal_number",
    "deal_scores",
    "dealer",
    "cards_each",
    "turned_up",
    "turned_card",
    "trump",
    "bids",
    "taker",
    "contract",
    "declarer",
    "used_contracts",
    "received",
    "passed",
)


def reading_context(observation: Mapping[str, Any]) -> str:
    """What names the deal and its public decisions for :meth:`HandReadings.start`."""
    return repr([observation.get(key) for key in READING_CONTEXT])


class WorldSampler:
    """Draws worlds for one move: uniformly, or weighted by :func:`log_likelihood`.

    Weighing reads hands, not states: the candidates are placements, scored against one
    state built for what everybody saw, and only the one kept is built into a state.
    ``readings``, kept by the seat from move to move of a deal, spare re-reading the others'
    plays on hands read before (:class:`HandReadings`). :attr:`work` counts what the draws
    cost, in playout actions.
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
        readings: HandReadings | None = None,
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
        self._builder = WorldBuilder(observation, hidden)
        self._public: GameState | None = None
        self._card_then: CardThen | None = None
        self._seat_plays: dict[int, list[Play]] = {}
        # Only plays are read again from move to move: where none weigh, nothing is kept.
        self.readings = readings if self.weigh and self.plays else None
        if self.readings is not None:
            self.readings.start(reading_context(observation), self.plays)
        self._hand_read_units = HAND_READ_UNITS.get(str(observation.get("game")), 0)
        #: Work the draws have cost so far, in playout actions.
        self.work = 0

    @property
    def draws_per_world(self) -> int:
        """Placements drawn and weighed for each world kept."""
        return 1 if self.importance or not self.weigh else self.candidates

    def draw(self, rng: random.Random) -> GameState:
        """A world drawn uniformly, or kept among ``candidates`` in proportion to their
        likelihood."""
        if not self.weigh:
            self.work += WORLD_DRAW_UNITS
            return self._world(self.draw_placement(self.hidden, rng))
        candidates = [self.draw_placement(self.hidden, rng) for _ in range(self.candidates)]
        logs = [self._log_likelihood(placement) for placement in candidates]
        top = max(logs)
        weights = [math.exp(value - top) for value in logs]
        return self._built(rng.choices(candidates, weights)[0])

    def draw_weighed(self, rng: random.Random) -> tuple[GameState, float]:
        """A world and the log of its weight: with ``importance``, one world drawn uniformly
        and its log-likelihood; else :meth:`draw`'s world, which its draws already weighed
        (0). Weights by importance keep every world drawn, so the worlds cost one draw each
        and follow the whole likelihood, where keeping one of two follows a little of it."""
        if not self.importance:
            return self.draw(rng), 0.0
        placement = self.draw_placement(self.hidden, rng)
        log = self._log_likelihood(placement)
        return self._built(placement), log

    def _log_likelihood(self, placement: list[list[Card]]) -> float:
        """The placement's log-likelihood; charges its draw and the plays it read."""
        if self._public is None:
            self._public = self._world(placement)
            self._card_then = card_then_for(self._public) if self.plays else None
            self._seat_plays = plays_by_seat(self.plays, self.observer)
        hands = deal_hands(self.hidden, placement, self.played)
        if self.readings is not None:
            return self._kept_log_likelihood(hands)
        public = self._public
        total = log_likelihood(public, self.observer, hands)
        reads = 0
        if self._card_then is not None:
            assert isinstance(public, WhistState | ThreeFiveEightState | HeartsState)
            for seat, plays in self._seat_plays.items():
                total += seat_plays_log_likelihood(
                    public, sorted(hands[seat]), plays, self._card_then
                )
                reads += len(plays)
        self.work += round(WORLD_DRAW_UNITS + PLAY_READ_UNITS * reads)
        return total

    def _kept_log_likelihood(self, hands: list[list[Card]]) -> float:
        """The log-likelihood of the others' ``hands`` by the readings kept; charges the
        placement's draw, the hands read now and the plays read on them."""
        assert self.readings is not None and self._public is not None
        total, units = 0.0, float(PLACEMENT_UNITS)
        for seat, hand in enumerate(hands):
            if seat == self.observer:
                continue
            plays = self._seat_plays.get(seat, [])
            reading, fresh, reads = self.readings.read(
                self._public, self.observer, seat, hand, plays, self._card_then
            )
            total += reading
            units += self._hand_read_units * fresh + PLAY_READ_UNITS * reads
        self.work += round(units)
        return total

    def _built(self, placement: list[list[Card]]) -> GameState:
        """The world of a placement drawn and weighed: with readings kept, building it is
        charged apart (the draw of a placement and its reading cost less than building it)."""
        if self.readings is not None:
            self.work += WORLD_BUILD_UNITS
        return self._world(placement)

    def _world(self, placement: list[list[Card]]) -> GameState:
        return self._builder.build(placement)
