"""Hearts, as docs/rules.md#hearts sets it out.

Four players, 52 cards, ace high, play to the left. Each deal: pass three cards (left, right,
across, none, repeating every four deals), the holder of the two of clubs leads it, hearts and
the queen of spades score against you, and taking all of them ("shooting the moon") gives the
other three 26 each instead. The classic game ends after the deal in which someone reaches 100;
the quick game is one deal. Lowest total wins.

Dealing: the deck order is dealt one card at a time, starting left of the dealer.

>>> from cardtable.engine.cards import FULL_DECK
>>> state = HEARTS.new_game(4, {"quick": "true"}, first_dealer=3)
>>> facts = state.deal(FULL_DECK)
>>> state.phase, state.to_act()
(<Phase.PASS: 'pass'>, (0, 1, 2, 3))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cardtable.engine.actions import PASS_CARDS, PLAY, PLAY_CARD, Action, pass_cards
from cardtable.engine.cards import (
    CLUBS,
    FULL_DECK,
    QUEEN,
    SPADES,
    SUIT_NAMES,
    SUIT_OF,
    TWO,
    Card,
    format_card,
    make_card,
)
from cardtable.engine.cards import (
    HEARTS as HEART_SUIT,
)
from cardtable.engine.errors import IllegalAction
from cardtable.engine.facts import (
    CARD_PLAYED,
    PUBLIC,
    Audience,
    CardsDealt,
    DealScored,
    DealStarted,
    Fact,
    TrickWon,
)
from cardtable.engine.game import (
    CardSetChoice,
    GameSpec,
    TrickGameState,
    trick_json,
    tricks_json,
)
from cardtable.engine.games.hearts.phases import Phase
from cardtable.engine.interchangeable import by_card_number, interchangeable_groups, known_to
from cardtable.engine.snapshot import (
    cards_from_json,
    cards_json,
    check_each_card_once,
    read_bool,
    read_cards,
    read_int,
    read_int_list,
    read_list,
    read_phase,
    require,
)
from cardtable.engine.snapshot import (
    inconsistent as _inconsistent,
)

# The phases as module globals for the checks made on every action: reading a global costs
# less than looking a member up on its enum class, which is a descriptor call on Python 3.11.
DEAL_PHASE, PASS_PHASE, PLAY_PHASE, OVER_PHASE = Phase.DEAL, Phase.PASS, Phase.PLAY, Phase.OVER

PLAYERS = 4
HAND_SIZE = 13
PASS_SIZE = 3
TWO_OF_CLUBS = make_card(TWO, CLUBS)
QUEEN_OF_SPADES = make_card(QUEEN, SPADES)
MOON_POINTS = 26
CLASSIC_END = 100


#: Seat offsets of the passing cycle: left, right, across, no pass (docs/rules.md, Hearts).
PASS_CYCLE = (1, 3, 2, 0)
PASS_DIRECTION_NAMES = {1: "left", 3: "right", 2: "across", 0: "none"}

#: Points of each card: 1 for a heart, 13 for the queen of spades.
CARD_POINTS: tuple[int, ...] = tuple(
    13 if card == QUEEN_OF_SPADES else int(SUIT_OF[card] == HEART_SUIT) for card in range(52)
)


@dataclass(frozen=True)
class HeartsOptions:
    """Table options for Hearts."""

    quick: bool = field(
        default=False, metadata={"help": "quick game: one deal instead of playing to 100"}
    )


class PassingAnnounced(NamedTuple):
    """Deal ``deal_number`` passes cards ``direction`` (left, right or across): public, so that
    everyone, the log's readers too, knows it while the passed cards stay hidden."""

    deal_number: int
    direction: str
    audience: Audience = PUBLIC


class PassChosen(NamedTuple):
    """``seat`` chose the cards it passes; only that seat sees them until everyone has chosen."""

    seat: int
    cards: tuple[int, ...]
    audience: tuple[int, ...] | None = None


class CardsPassed(NamedTuple):
    """``seat``'s three cards went to ``to_seat``; the two of them see the cards."""

    seat: int
    to_seat: int
    cards: tuple[int, ...]
    audience: tuple[int, ...] | None = None


class MoonShot(NamedTuple):
    """``seat`` took every heart and the queen of spades this deal."""

    seat: int
    audience: tuple[int, ...] | None = None


def playable_cards(
    hand: list[Card], trick: Sequence[Card], first_trick: bool, hearts_broken: bool
) -> list[Card]:
    """The cards of ``hand`` that may go on ``trick``: follow suit; the two of clubs leads the
    first trick, which takes no points while there is another choice; hearts lead once broken
    (or when the hand holds nothing else)."""
    if not trick:
        if first_trick:
            return [TWO_OF_CLUBS]
        if hearts_broken:
            return hand
        return [card for card in hand if SUIT_OF[card] != HEART_SUIT] or hand
    led = SUIT_OF[trick[0]]
    follow = [card for card in hand if SUIT_OF[card] == led]
    if follow:
        return follow
    if first_trick:
        safe = [card for card in hand if SUIT_OF[card] != HEART_SUIT and card != QUEEN_OF_SPADES]
        if safe:
            return safe
    return hand


class HeartsState(TrickGameState):
    """A game of Hearts in progress."""

    play_phase = PLAY_PHASE
    _phase: Phase

    def __init__(self, num_players: int, options: HeartsOptions, first_dealer: int) -> None:
        super().__init__(num_players, options, first_dealer)
        self._phase = DEAL_PHASE
        self.hands: list[list[Card]] = [[] for _ in range(PLAYERS)]
        self.pass_offset = 0
        self.passes: list[tuple[Card, ...] | None] = [None] * PLAYERS
        self.received: list[tuple[Card, ...]] = [() for _ in range(PLAYERS)]
        self.trick: list[Card] = []
        self.leader = 0
        self.player = 0
        self.tricks: list[tuple[int, tuple[Card, ...], int]] = []
        self.hearts_broken = False
        self.points = [0] * PLAYERS

    # -- dealing ---------------------------------------------------------------------------
    def deck(self) -> tuple[Card, ...]:
        return FULL_DECK

    def needs_deal(self) -> bool:
        return self._phase == DEAL_PHASE

    def _deal(self, order: tuple[Card, ...]) -> list[Fact]:
        self._start_next_deal(direction=1)
        first = (self.dealer + 1) % PLAYERS
        self.hands = [sorted(order[(seat - first) % PLAYERS :: PLAYERS]) for seat in range(PLAYERS)]
        self.pass_offset = PASS_CYCLE[(self.deal_number - 1) % len(PASS_CYCLE)]
        self.passes = [None] * PLAYERS
        self.received = [() for _ in range(PLAYERS)]
        self.trick = []
        self.tricks = []
        self.hearts_broken = False
        self.points = [0] * PLAYERS
        facts: list[Fact] = [DealStarted(self.deal_number, self.dealer, HAND_SIZE)]
        facts.extend(CardsDealt(seat, tuple(self.hands[seat]), (seat,)) for seat in range(PLAYERS))
        if self.pass_offset:
            self._phase = PASS_PHASE
            facts.append(PassingAnnounced(self.deal_number, PASS_DIRECTION_NAMES[self.pass_offset]))
        else:
            self._start_play()
        return facts

    def _start_play(self) -> None:
        self._phase = PLAY_PHASE
        self.leader = self.player = next(
            seat for seat in range(PLAYERS) if TWO_OF_CLUBS in self.hands[seat]
        )

    # -- turns -----------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    def to_act(self) -> tuple[int, ...]:
        if self._phase == PLAY_PHASE:
            return (self.player,)
        if self._phase == PASS_PHASE:
            return tuple(seat for seat in range(PLAYERS) if self.passes[seat] is None)
        return ()

    def legal_actions(self, seat: int) -> list[Action]:
        if self._phase == PLAY_PHASE:
            return [PLAY[card] for card in self.playable(seat)]
        if self._phase == PASS_PHASE and self.passes[seat] is None:
            return self._legal_passes(self.hands[seat])
        return []

    def card_set_choice(self, seat: int) -> CardSetChoice | None:
        if self._phase == PASS_PHASE and self.passes[seat] is None:
            return CardSetChoice(tuple(self.hands[seat]), PASS_SIZE, pass_cards)
        return None

    @staticmethod
    def _legal_passes(hand: list[Card]) -> list[Action]:
        """All 286 ways to choose three cards, in a fixed order."""
        size = len(hand)
        return [
            pass_cards((hand[first], hand[second], hand[third]))
            for first in range(size)
            for second in range(first + 1, size)
            for third in range(second + 1, size)
        ]

    def _playable(self, hand: list[Card]) -> list[Card]:
        """The cards of ``hand`` the player to act may play (the hot path of every playout)."""
        return playable_cards(hand, self.trick, not self.tricks, self.hearts_broken)

    def interchangeable_plays(self, seat: int, cards: Sequence[Card]) -> list[list[Card]]:
        """Touching cards of equal points (two hearts, two low spades; never the queen with
        a neighbour) take the same tricks and the same points."""
        known = known_to(self.hands[seat], self.tricks)
        return interchangeable_groups(
            cards, known, self.deck(), by_card_number, CARD_POINTS.__getitem__
        )

    def playable_in(
        self, hand: list[Card], trick: Sequence[Card], trick_number: int | None = None
    ) -> list[Card]:
        """The cards of ``hand`` a player may add to ``trick``, the deal's ``trick_number``-th
        (0-based; default: the one on the table): how a bot reads a play it saw, on a hand it
        supposes the player held then. Hearts were broken if one was played before."""
        number = len(self.tricks) if trick_number is None else trick_number
        broken = any(SUIT_OF[card] == HEART_SUIT for card in trick) or any(
            SUIT_OF[card] == HEART_SUIT for _, cards, _ in self.tricks[:number] for card in cards
        )
        return playable_cards(hand, trick, number == 0, broken)

    def why_illegal(self, seat: int, action: Action) -> str | None:
        # The common case of every playout, checked without the general preamble.
        if self._phase == PLAY_PHASE and seat == self.player and action.kind == PLAY_CARD:
            return self._why_play_illegal(seat, action.card)
        return super().why_illegal(seat, action)

    def apply(self, seat: int, action: Action) -> list[Fact]:
        # Same rules as GameState.apply; the common case skips two levels of dispatch.
        if self._phase == PLAY_PHASE and seat == self.player and action.kind == PLAY_CARD:
            reason = self._why_play_illegal(seat, action.card)
            if reason is not None:
                raise IllegalAction(reason)
            return self._apply_play(seat, action.card)
        return super().apply(seat, action)

    def _why_illegal(self, seat: int, action: Action) -> str | None:
        if self._phase == PASS_PHASE:
            return self._why_pass_illegal(seat, action)
        if action.kind != PLAY_CARD:
            return "it is time to play a card"
        return self._why_play_illegal(seat, action.card)

    def _why_pass_illegal(self, seat: int, action: Action) -> str | None:
        if action.kind != PASS_CARDS:
            return f"it is time to pass three cards {PASS_DIRECTION_NAMES[self.pass_offset]}"
        cards = action.cards
        if len(cards) != PASS_SIZE or len(set(cards)) != PASS_SIZE:
            return "you must pass exactly three different cards"
        missing = [card for card in cards if card not in self.hands[seat]]
        if missing:
            return f"you do not hold {format_card(missing[0])}"
        return None

    def _why_play_illegal(self, seat: int, card: Card) -> str | None:
        hand = self.hands[seat]
        if card not in hand:
            return f"you do not hold {format_card(card)}"
        trick = self.trick
        suit = SUIT_OF[card]
        if not trick:
            if not self.tricks and card != TWO_OF_CLUBS:
                return "the first trick must be led with the two of clubs"
            leads_heart_unbroken = suit == HEART_SUIT and not self.hearts_broken
            if leads_heart_unbroken and any(SUIT_OF[other] != HEART_SUIT for other in hand):
                return "you may not lead hearts until hearts are broken"
            return None
        led = SUIT_OF[trick[0]]
        if suit != led and any(SUIT_OF[other] == led for other in hand):
            return f"you must follow {SUIT_NAMES[led]}"
        if not self.tricks and (suit == HEART_SUIT or card == QUEEN_OF_SPADES):
            has_safe = any(
                SUIT_OF[other] != HEART_SUIT and other != QUEEN_OF_SPADES for other in hand
            )
            if has_safe:
                return "no heart and no queen of spades on the first trick"
        return None

    # -- applying --------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> list[Fact]:
        if self._phase == PASS_PHASE:
            return self._apply_pass(seat, action.cards)
        return self._apply_play(seat, action.card)

    def _apply_pass(self, seat: int, cards: tuple[Card, ...]) -> list[Fact]:
        self.passes[seat] = cards
        facts: list[Fact] = [PassChosen(seat, cards, (seat,))]
        if any(chosen is None for chosen in self.passes):
            return facts
        for giver in range(PLAYERS):
            receiver = (giver + self.pass_offset) % PLAYERS
            passed = self.passes[giver]
            assert passed is not None
            for card in passed:
                self.hands[giver].remove(card)
            self.received[receiver] = passed
            facts.append(CardsPassed(giver, receiver, passed, (giver, receiver)))
        for receiver in range(PLAYERS):
            self.hands[receiver].extend(self.received[receiver])
            self.hands[receiver].sort()
        self._start_play()
        return facts

    def _apply_play(self, seat: int, card: Card) -> list[Fact]:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append(card)
        if SUIT_OF[card] == HEART_SUIT:
            self.hearts_broken = True
        played = CARD_PLAYED[seat][card]
        if len(trick) < PLAYERS:
            self.player = (seat + 1) % PLAYERS
            return [played]
        led = SUIT_OF[trick[0]]
        best = 0
        for position in range(1, PLAYERS):
            other = trick[position]
            if SUIT_OF[other] == led and other > trick[best]:
                best = position
        winner = (self.leader + best) % PLAYERS
        points = CARD_POINTS[trick[0]] + CARD_POINTS[trick[1]] + CARD_POINTS[trick[2]]
        points += CARD_POINTS[trick[3]]
        self.points[winner] += points
        cards = tuple(trick)
        self.tricks.append((self.leader, cards, winner))
        facts: list[Fact] = [played, TrickWon(len(self.tricks), self.leader, winner, cards, points)]
        self.trick = []
        self.leader = self.player = winner
        if len(self.tricks) == HAND_SIZE:
            facts.extend(self._score_deal())
        return facts

    def _score_deal(self) -> list[Fact]:
        facts: list[Fact] = []
        scores = list(self.points)
        shooter = next((seat for seat in range(PLAYERS) if scores[seat] == MOON_POINTS), None)
        if shooter is not None:
            scores = [0 if seat == shooter else MOON_POINTS for seat in range(PLAYERS)]
            facts.append(MoonShot(shooter))
        totals = self._record_deal_scores(scores)
        facts.append(DealScored(self.deal_number, tuple(scores), totals))
        if self.options.quick or max(totals) >= CLASSIC_END:
            self._phase = OVER_PHASE
            facts.append(self._end_game())
        else:
            self._phase = DEAL_PHASE
        return facts

    # -- results and views -----------------------------------------------------------------
    def progress(self) -> float:
        """Deals completed over the game's length.

        A quick game is one deal. A classic game has no fixed length, so its share is the
        highest total over 100 (the end), capped at 1: our reading of "the fraction of the
        game's deals completed" for a game whose deal count is not known in advance.
        """
        if self.over:
            return 1.0
        if self.options.quick:
            return 0.0
        return min(1.0, max(self.totals) / CLASSIC_END)

    def _observation(self, seat: int | None) -> dict[str, Any]:
        own = seat is not None
        passes_done = self._phase != PASS_PHASE and self._phase != DEAL_PHASE
        chosen = self.passes[seat] if own and seat is not None else None
        return {
            "hand": cards_json(self.hands[seat]) if own and seat is not None else [],
            "hand_sizes": [len(hand) for hand in self.hands],
            "pass_direction": PASS_DIRECTION_NAMES[self.pass_offset],
            "passed": cards_json(chosen) if chosen else [],
            "received": (
                cards_json(self.received[seat]) if own and seat is not None and passes_done else []
            ),
            "passes_chosen": [chosen_cards is not None for chosen_cards in self.passes],
            "trick": trick_json(self.leader, self.trick, PLAYERS),
            "leader": self.leader if self._phase == PLAY_PHASE else None,
            "tricks": tricks_json(self.tricks),
            "hearts_broken": self.hearts_broken,
            "points": list(self.points),
        }

    def clone(self) -> HeartsState:
        other = self._shallow_copy()
        other.hands = [list(hand) for hand in self.hands]
        other.passes = list(self.passes)
        other.received = list(self.received)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.points = list(self.points)
        return other

    # -- snapshots -------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        return {
            "phase": self._phase,
            "hands": [cards_json(hand) for hand in self.hands],
            "pass_offset": self.pass_offset,
            "passes": [None if chosen is None else cards_json(chosen) for chosen in self.passes],
            "received": [cards_json(cards) for cards in self.received],
            "trick": cards_json(self.trick),
            "leader": self.leader,
            "player": self.player,
            "tricks": tricks_json(self.tricks),
            "hearts_broken": self.hearts_broken,
            "points": list(self.points),
        }

    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        self._phase = read_phase(data, "phase", Phase)
        if (self._phase == OVER_PHASE) != self.over:
            raise _inconsistent("the phase and the end of the game disagree")
        self._load_hidden_places(data)
        self.pass_offset = read_int(data, "pass_offset", 0, 3)
        if self.deal_number and self.pass_offset != PASS_CYCLE[(self.deal_number - 1) % 4]:
            raise _inconsistent("the pass direction does not match the deal number")
        passes_data = read_list(data, "passes", PLAYERS)
        self.passes = [
            None if chosen is None else tuple(cards_from_json(chosen, "passes", PASS_SIZE))
            for chosen in passes_data
        ]
        received_data = read_list(data, "received", PLAYERS)
        self.received = [tuple(cards_from_json(cards, "received", 3)) for cards in received_data]
        if len(self.passes) != PLAYERS or len(self.received) != PLAYERS:
            raise _inconsistent("passes and received cards are kept per seat")
        self.trick = read_cards(data, "trick", PLAYERS - 1)
        self.leader = read_int(data, "leader", 0, PLAYERS - 1)
        self.player = read_int(data, "player", 0, PLAYERS - 1)
        tricks_data = read_list(data, "tricks", HAND_SIZE)
        self.tricks = []
        for trick in tricks_data:
            leader = read_int(trick, "leader", 0, PLAYERS - 1)
            cards = tuple(cards_from_json(require(trick, "cards"), "tricks", PLAYERS))
            winner = read_int(trick, "winner", 0, PLAYERS - 1)
            if len(cards) != PLAYERS:
                raise _inconsistent("a finished trick holds four cards")
            self.tricks.append((leader, cards, winner))
        self.hearts_broken = read_bool(data, "hearts_broken")
        self.points = read_int_list(data, "points", PLAYERS, 0, MOON_POINTS)
        self._check_invariants()

    def _load_hidden_places(self, data: Mapping[str, Any]) -> bool:
        """Only hands are hidden (another seat's pass is too, but never drawn)."""
        hands_data = read_list(data, "hands", PLAYERS)
        if len(hands_data) != PLAYERS:
            raise _inconsistent("Hearts has four hands")
        self.hands = [sorted(cards_from_json(hand, "hands", HAND_SIZE)) for hand in hands_data]
        return True

    def _check_invariants(self) -> None:
        if self._phase in (DEAL_PHASE, OVER_PHASE):
            return
        played = [card for _, cards, _ in self.tricks for card in cards]
        check_each_card_once([*self.hands, played, self.trick], FULL_DECK)
        if self._phase == PASS_PHASE:
            if self.trick or self.tricks or any(len(hand) != HAND_SIZE for hand in self.hands):
                raise _inconsistent("no card is played before the pass")
            for seat, chosen in enumerate(self.passes):
                if chosen is not None and not set(chosen) <= set(self.hands[seat]):
                    raise _inconsistent("a seat passes a card it does not hold")
            return
        if self.player != (self.leader + len(self.trick)) % PLAYERS:
            raise _inconsistent("the player to act does not follow the leader")
        sizes = {
            len(hand) + (1 if (seat - self.leader) % PLAYERS < len(self.trick) else 0)
            for seat, hand in enumerate(self.hands)
        }
        if sizes != {HAND_SIZE - len(self.tricks)}:
            raise _inconsistent("the hands do not match the tricks played")
        if sum(self.points) != sum(CARD_POINTS[card] for card in played):
            raise _inconsistent("the points do not match the tricks taken")
        any_heart = any(SUIT_OF[card] == HEART_SUIT for card in played + self.trick)
        if self.hearts_broken != any_heart:
            raise _inconsistent("hearts broken does not match the cards played")


HEARTS = GameSpec(
    name="hearts",
    title="Hearts",
    min_players=PLAYERS,
    max_players=PLAYERS,
    options_type=HeartsOptions,
    state_type=HeartsState,
    lower_is_better=True,
)
HeartsState.spec = HEARTS
