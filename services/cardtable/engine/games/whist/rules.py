"""Whist, as docs/rules.md#whist sets it out: the Romanian bidding whist "1-8-1".

Three to six players, the 8 × n highest cards (3 players A-9, 4 A-7, 5 A-5, 6 A-3), ace high,
play to the left. The deals grow from 1 card each to 8 and shrink back to 1 (3n + 12 deals).
After each deal the next card of the deck is turned up and its suit is trump; deals of 8 use the
whole deck and have no trump. Everyone bids the exact number of tricks they will take, the
dealer last and never so that the bids add up to the number of cards. Making the bid exactly
scores 5 + bid, missing it costs the difference; five exact bids (or five misses) in a row, not
counting deals of one card, add +10 (or -10). Highest total wins.

Dealing a deal of k cards from a deck order (top of the deck first): the first k × n cards go
one at a time to each seat in turn, starting with the seat left of the dealer, so card ``i``
goes to seat ``(dealer + 1 + i) % n``. If k < 8, card ``k × n`` is turned up and sets trump;
the cards after it stay in the stock, unseen. A deal of 8 uses every card and has no trump.

>>> state = WHIST.new_game(4, {"must_trump": "true"}, first_dealer=3)
>>> facts = state.deal(state.deck())
>>> state.phase, state.to_act(), state.observation(0)["hand"], state.observation(0)["trump"]
(<Phase.BID: 'bid'>, (0,), ['7C'], 'C')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cardtable.engine.actions import BID, BIDS, PLAY, PLAY_CARD, Action
from cardtable.engine.cards import (
    ACE,
    SUIT_LETTERS,
    SUIT_NAMES,
    SUIT_OF,
    Card,
    deck_of_ranks,
    format_card,
    parse_card,
    trick_winner,
)
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import (
    CARD_PLAYED,
    BidMade,
    CardsDealt,
    CardTurnedUp,
    DealScored,
    DealStarted,
    Fact,
    TrickWon,
    TrumpChosen,
)
from cardtable.engine.game import (
    GameSpec,
    TrickGameState,
    trick_json,
    tricks_json,
)
from cardtable.engine.games.whist.phases import Phase
from cardtable.engine.interchangeable import (
    by_card_number,
    interchangeable_groups,
    known_to,
    no_points,
)
from cardtable.engine.snapshot import (
    cards_from_json,
    cards_json,
    inconsistent,
    read_int,
    read_list,
    read_phase,
    require,
)

# The phases as module globals for the checks made on every action: reading a global costs
# less than looking a member up on its enum class, which is a descriptor call on Python 3.11.
DEAL_PHASE, BID_PHASE, PLAY_PHASE, OVER_PHASE = Phase.DEAL, Phase.BID, Phase.PLAY, Phase.OVER

MIN_PLAYERS = 3
MAX_PLAYERS = 6
MAX_HAND = 8
EXACT_POINTS = 5
STREAK_LENGTH = 5
STREAK_BONUS = 10
#: The trump of a deal without trump; no card's suit equals it, which keeps the hot path simple.
NO_TRUMP = -1


#: ``SEATS[seat]`` is the one-seat tuple ``to_act`` returns, built once instead of per call.
SEATS: tuple[tuple[int, ...], ...] = tuple((seat,) for seat in range(MAX_PLAYERS))


def deal_sizes(players: int) -> tuple[int, ...]:
    """Cards each, deal by deal: docs/rules.md Whist "1-8-1", 3n + 12 deals.

    >>> deal_sizes(3)
    (1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1)
    """
    ones = (1,) * players
    return ones + tuple(range(2, MAX_HAND)) + (MAX_HAND,) * players + tuple(range(7, 1, -1)) + ones


def whist_deck(players: int) -> tuple[Card, ...]:
    """The 8 × n highest cards: 2n ranks down from the ace in each suit (docs/rules.md Whist)."""
    return deck_of_ranks(ACE + 1 - 2 * players)


def deal_score(bid: int, tricks: int) -> int:
    """One deal's score before streaks (docs/rules.md Whist, hand score).

    Exactly the bid earns 5 + bid; otherwise the player loses one point per trick of difference.

    >>> deal_score(3, 3), deal_score(3, 5), deal_score(0, 0)
    (8, -2, 5)
    """
    if tricks == bid:
        return EXACT_POINTS + bid
    return -abs(tricks - bid)


def counts_toward_streaks(cards_each: int) -> bool:
    """Whether a deal of ``cards_each`` cards extends or breaks a run: deals of one card do
    not (docs/rules.md Whist, streaks).

    >>> counts_toward_streaks(1), counts_toward_streaks(2)
    (False, True)
    """
    return cards_each > 1


def streak_step(exact_run: int, miss_run: int, exact: bool) -> tuple[int, int, int]:
    """The streak counters after one counted deal, and the bonus it earns (docs/rules.md Whist).

    An exact bid extends the exact run and ends the miss run, a miss the other way round; the
    fifth in a row earns +10 (or -10) and both runs restart from zero. Deals of one card are not
    passed here at all: they neither extend nor break a run.

    >>> streak_step(4, 0, True), streak_step(4, 0, False), streak_step(0, 4, False)
    ((0, 0, 10), (0, 1, 0), (0, 0, -10))
    """
    if exact:
        exact_run, miss_run = exact_run + 1, 0
        if exact_run == STREAK_LENGTH:
            return 0, 0, STREAK_BONUS
    else:
        exact_run, miss_run = 0, miss_run + 1
        if miss_run == STREAK_LENGTH:
            return 0, 0, -STREAK_BONUS
    return exact_run, miss_run, 0


@dataclass(frozen=True)
class WhistOptions:
    """Table options for Whist."""

    must_trump: bool = field(
        default=False,
        metadata={
            "help": "must trump when void: a player with no card of the suit led who holds a "
            "trump must play one (default off: any card)"
        },
    )


class StreakBonus(NamedTuple):
    """``seat`` completed five exact bids (+10) or five misses (-10) in a row this deal."""

    seat: int
    points: int
    audience: tuple[int, ...] | None = None


class WhistState(TrickGameState):
    """A game of Whist in progress."""

    play_phase = PLAY_PHASE
    _phase: Phase

    def __init__(self, num_players: int, options: WhistOptions, first_dealer: int) -> None:
        super().__init__(num_players, options, first_dealer)
        self.must_trump: bool = options.must_trump
        self.cards = whist_deck(num_players)
        self.deal_sizes = deal_sizes(num_players)
        self._phase = DEAL_PHASE
        self.cards_each = 0
        self.hands: list[list[Card]] = [[] for _ in range(num_players)]
        self.turned_up: Card | None = None
        self.trump = NO_TRUMP
        self.bids: list[int | None] = [None] * num_players
        self.trick: list[Card] = []
        self.leader = 0
        self.player = 0
        self.tricks: list[tuple[int, tuple[Card, ...], int]] = []
        self.tricks_won = [0] * num_players
        self.exact_runs = [0] * num_players
        self.miss_runs = [0] * num_players

    # -- dealing ---------------------------------------------------------------------------
    def deck(self) -> tuple[Card, ...]:
        return self.cards

    def needs_deal(self) -> bool:
        return self._phase == DEAL_PHASE

    def _deal(self, order: tuple[Card, ...]) -> list[Fact]:
        self._start_next_deal(direction=1)
        players = self.num_players
        cards_each = self.cards_each = self.deal_sizes[self.deal_number - 1]
        dealt = cards_each * players
        first = (self.dealer + 1) % players
        self.hands = [
            sorted(order[(seat - first) % players : dealt : players]) for seat in range(players)
        ]
        self.bids = [None] * players
        self.trick = []
        self.tricks = []
        self.tricks_won = [0] * players
        facts: list[Fact] = [DealStarted(self.deal_number, self.dealer, cards_each)]
        facts.extend(
            CardsDealt(seat, tuple(self.hands[seat]), SEATS[seat]) for seat in range(players)
        )
        # docs/rules.md Whist, trump: the next card is turned up; a deal of 8 has none left over.
        if dealt < len(order):
            self.turned_up = order[dealt]
            self.trump = SUIT_OF[self.turned_up]
            facts.append(CardTurnedUp(self.turned_up))
            facts.append(TrumpChosen(SUIT_LETTERS[self.trump]))
        else:
            self.turned_up = None
            self.trump = NO_TRUMP
            facts.append(TrumpChosen(""))
        # docs/rules.md Whist, bidding: starting left of the dealer.
        self._phase = BID_PHASE
        self.player = first
        return facts

    # -- turns -----------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    def to_act(self) -> tuple[int, ...]:
        if self._phase == PLAY_PHASE or self._phase == BID_PHASE:
            return SEATS[self.player]
        return ()

    def legal_actions(self, seat: int) -> list[Action]:
        if seat != self.player:
            return []
        if self._phase == PLAY_PHASE:
            return [PLAY[card] for card in self._playable(self.hands[seat])]
        if self._phase == BID_PHASE:
            actions = list(BIDS[: self.cards_each + 1])
            forbidden = self._forbidden_bid(seat)
            if forbidden is not None:
                del actions[forbidden]
            return actions
        return []

    def _forbidden_bid(self, seat: int) -> int | None:
        """The bid the dealer may not make: the one that makes the bids total the cards each.

        docs/rules.md Whist, bidding. ``None`` for the other seats, and for the dealer when the
        others already bid more than there are tricks.
        """
        if seat != self.dealer:
            return None
        forbidden = self.cards_each - sum(bid for bid in self.bids if bid is not None)
        return forbidden if forbidden >= 0 else None

    def _playable(self, hand: list[Card]) -> list[Card]:
        """The cards of ``hand`` the player to act may play (the hot path of every playout)."""
        return self.playable_in(hand, self.trick)

    def interchangeable_plays(self, seat: int, cards: Sequence[Card]) -> list[list[Card]]:
        """Only tricks count, so cards with nothing between them another seat may hold are one."""
        known = known_to(self.hands[seat], self.tricks)
        return interchangeable_groups(cards, known, self.deck(), by_card_number, no_points)

    def playable_in(
        self, hand: list[Card], trick: Sequence[Card], trick_number: int | None = None
    ) -> list[Card]:
        """The cards of ``hand`` a player may add to ``trick`` in this deal: how a bot reads a
        play it saw, on a hand it supposes the player held then. The trick's number (the
        interface Hearts needs) changes nothing here."""
        if not trick:
            return hand
        led = SUIT_OF[trick[0]]
        follow = [card for card in hand if SUIT_OF[card] == led]
        if follow:
            return follow
        if self.must_trump:
            trump = self.trump
            trumps = [card for card in hand if SUIT_OF[card] == trump]
            if trumps:
                return trumps
        return hand

    def _why_illegal(self, seat: int, action: Action) -> str | None:
        if self._phase == BID_PHASE:
            return self._why_bid_illegal(seat, action)
        if action.kind != PLAY_CARD:
            return "it is time to play a card"
        return self._why_play_illegal(seat, action.card)

    def _why_bid_illegal(self, seat: int, action: Action) -> str | None:
        if action.kind != BID:
            return "it is time to bid"
        cards_each = self.cards_each
        tricks = action.number
        if not 0 <= tricks <= cards_each:
            return f"bid from 0 to {cards_each}: there are {cards_each} tricks in this deal"
        if tricks == self._forbidden_bid(seat):
            return f"the dealer may not bid {tricks}: the bids would total the number of cards"
        return None

    def _why_play_illegal(self, seat: int, card: Card) -> str | None:
        hand = self.hands[seat]
        if card not in hand:
            return f"you do not hold {format_card(card)}"
        trick = self.trick
        if not trick:
            return None
        # docs/rules.md Whist, play: follow suit if possible; else any card, or a trump if the
        # must-trump option is on and the player holds one.
        led = SUIT_OF[trick[0]]
        suit = SUIT_OF[card]
        if suit == led:
            return None
        if any(SUIT_OF[other] == led for other in hand):
            return f"you must follow {SUIT_NAMES[led]}"
        trump = self.trump
        if self.must_trump and suit != trump and any(SUIT_OF[other] == trump for other in hand):
            return f"you have no {SUIT_NAMES[led]}, so you must play a trump ({SUIT_NAMES[trump]})"
        return None

    # -- applying --------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> list[Fact]:
        if self._phase == BID_PHASE:
            return self._apply_bid(seat, action.number)
        return self._apply_play(seat, action.card)

    def _apply_bid(self, seat: int, tricks: int) -> list[Fact]:
        self.bids[seat] = tricks
        self.player = (seat + 1) % self.num_players
        if seat == self.dealer:
            # docs/rules.md Whist, play: the player left of the dealer leads the first trick.
            self._phase = PLAY_PHASE
            self.leader = self.player
        return [BidMade(seat, tricks)]

    def _apply_play(self, seat: int, card: Card) -> list[Fact]:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append(card)
        played = CARD_PLAYED[seat][card]
        players = self.num_players
        if len(trick) < players:
            self.player = (seat + 1) % players
            return [played]
        leader = self.leader
        winner = trick_winner(trick, leader, self.trump, players)
        self.tricks_won[winner] += 1
        cards = tuple(trick)
        self.tricks.append((leader, cards, winner))
        facts: list[Fact] = [played, TrickWon(len(self.tricks), leader, winner, cards)]
        self.trick = []
        self.leader = self.player = winner
        if len(self.tricks) == self.cards_each:
            facts.extend(self._score_deal())
        return facts

    def _score_deal(self) -> list[Fact]:
        """Score the deal (docs/rules.md, Whist: hand score and streaks); end the game after the
        last."""
        facts: list[Fact] = []
        counted = counts_toward_streaks(self.cards_each)
        scores = []
        for seat in range(self.num_players):
            bid = self.bids[seat]
            assert bid is not None
            won = self.tricks_won[seat]
            score = deal_score(bid, won)
            if counted:
                self.exact_runs[seat], self.miss_runs[seat], bonus = streak_step(
                    self.exact_runs[seat], self.miss_runs[seat], won == bid
                )
                if bonus:
                    score += bonus
                    facts.append(StreakBonus(seat, bonus))
            scores.append(score)
        totals = self._record_deal_scores(scores)
        facts.append(DealScored(self.deal_number, tuple(scores), totals))
        if self.deal_number == len(self.deal_sizes):
            self._phase = OVER_PHASE
            facts.append(self._end_game())
        else:
            self._phase = DEAL_PHASE
        return facts

    def counted_deals_left(self) -> int:
        """Deals still to be scored that count toward streaks (the one in play included)."""
        return sum(counts_toward_streaks(size) for size in self.deal_sizes[len(self.deal_scores) :])

    # -- results and views -----------------------------------------------------------------
    def progress(self) -> float:
        """Deals completed over the 3n + 12 deals of the game."""
        return len(self.deal_scores) / len(self.deal_sizes)

    def _observation(self, seat: int | None) -> dict[str, Any]:
        return {
            "hand": cards_json(self.hands[seat]) if seat is not None else [],
            "hand_sizes": [len(hand) for hand in self.hands],
            "cards_each": self.cards_each,
            "deals_total": len(self.deal_sizes),
            "turned_up": None if self.turned_up is None else format_card(self.turned_up),
            "trump": "" if self.trump == NO_TRUMP else SUIT_LETTERS[self.trump],
            "bids": list(self.bids),
            "tricks_won": list(self.tricks_won),
            "trick": trick_json(self.leader, self.trick, self.num_players),
            "leader": self.leader if self._phase == PLAY_PHASE else None,
            "tricks": tricks_json(self.tricks),
            "exact_streaks": list(self.exact_runs),
            "miss_streaks": list(self.miss_runs),
        }

    def clone(self) -> WhistState:
        other = self._shallow_copy()
        other.hands = [list(hand) for hand in self.hands]
        other.bids = list(self.bids)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.tricks_won = list(self.tricks_won)
        other.exact_runs = list(self.exact_runs)
        other.miss_runs = list(self.miss_runs)
        return other

    # -- snapshots -------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        """The deal in flight; everything else (trump, leader, turn, tricks won, streaks) is
        derived from it and from the shared fields when the snapshot is loaded."""
        return {
            "phase": self._phase,
            "hands": [cards_json(hand) for hand in self.hands],
            "turned_up": None if self.turned_up is None else format_card(self.turned_up),
            "bids": list(self.bids),
            "tricks": [cards_json(cards) for _, cards, _ in self.tricks],
            "trick": cards_json(self.trick),
        }

    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        players = self.num_players
        self._phase = read_phase(data, "phase", Phase)
        self._check_deal_counts()
        self.cards_each = self.deal_sizes[self.deal_number - 1] if self.deal_number else 0
        self._load_streaks()
        self._load_hidden_places(data)
        turned_up = require(data, "turned_up")
        if turned_up is not None and not isinstance(turned_up, str):
            raise InvalidInput("snapshot field 'turned_up' must be a card or null")
        self.turned_up = None if turned_up is None else parse_card(turned_up)
        self.trump = NO_TRUMP if self.turned_up is None else SUIT_OF[self.turned_up]
        self.bids = [
            None if bid is None else read_int({"bids": bid}, "bids", 0, self.cards_each)
            for bid in read_list(data, "bids", players)
        ]
        if len(self.bids) != players:
            raise inconsistent(f"there must be one bid per seat ({players})")
        self.trick = cards_from_json(require(data, "trick"), "trick", players - 1)
        self._load_tricks(read_list(data, "tricks", self.cards_each))
        self._check_invariants()

    def _load_hidden_places(self, data: Mapping[str, Any]) -> bool:
        """Only hands are hidden."""
        players = self.num_players
        hands_data = read_list(data, "hands", players)
        if len(hands_data) != players:
            raise inconsistent(f"there must be one hand per seat ({players})")
        self.hands = [sorted(cards_from_json(hand, "hands", MAX_HAND)) for hand in hands_data]
        return True

    def _check_deal_counts(self) -> None:
        """The deal number, the dealer and the number of scored deals must agree."""
        deals = len(self.deal_sizes)
        if self.deal_number > deals:
            raise inconsistent(f"a game of {self.num_players} players has {deals} deals")
        if (self._phase == OVER_PHASE) != self.over:
            raise inconsistent("the phase and the end of the game disagree")
        if self.over and self.deal_number != deals:
            raise inconsistent("the game ends only after the last deal")
        if self._phase == DEAL_PHASE and self.deal_number == deals:
            raise inconsistent("there is no deal after the last one")
        if self._phase in (BID_PHASE, PLAY_PHASE) and not self.deal_number:
            raise inconsistent("no deal has been dealt yet")
        dealer = (self.first_dealer + max(self.deal_number - 1, 0)) % self.num_players
        if self.dealer != dealer:
            raise inconsistent("the dealer does not follow from the first dealer")
        scored = self.deal_number - (self._phase in (BID_PHASE, PLAY_PHASE))
        if len(self.deal_scores) != scored:
            raise inconsistent("the scored deals do not match the deal number")

    def _load_streaks(self) -> None:
        """Rebuild the streak counters from the deal scores, checking each score is possible.

        An exact bid scores at least 5 and a miss at most -1, bonus or not, so each score tells
        which it was; that replays the streak rule and leaves the bonus, which must fit too.
        """
        self.exact_runs = [0] * self.num_players
        self.miss_runs = [0] * self.num_players
        for index, row in enumerate(self.deal_scores):
            cards_each = self.deal_sizes[index]
            for seat, score in enumerate(row):
                exact = score > 0
                bonus = 0
                if counts_toward_streaks(cards_each):
                    self.exact_runs[seat], self.miss_runs[seat], bonus = streak_step(
                        self.exact_runs[seat], self.miss_runs[seat], exact
                    )
                low, high = (
                    (EXACT_POINTS, EXACT_POINTS + cards_each) if exact else (-cards_each, -1)
                )
                if not low <= score - bonus <= high:
                    raise inconsistent(
                        f"seat {seat} cannot have scored {score} in deal {index + 1}"
                    )

    def _load_tricks(self, tricks_data: list[Any]) -> None:
        """Replay the finished tricks: each one's leader and winner follow from the cards."""
        players = self.num_players
        self.tricks = []
        self.tricks_won = [0] * players
        leader = (self.dealer + 1) % players
        for trick_data in tricks_data:
            cards = tuple(cards_from_json(trick_data, "tricks", players))
            if len(cards) != players:
                raise inconsistent(f"a finished trick holds {players} cards")
            winner = trick_winner(cards, leader, self.trump, players)
            self.tricks.append((leader, cards, winner))
            self.tricks_won[winner] += 1
            leader = winner
        self.leader = leader

    def _check_invariants(self) -> None:
        players = self.num_players
        cards_each = self.cards_each
        played = [card for _, cards, _ in self.tricks for card in cards]
        seen = [*(card for hand in self.hands for card in hand), *played, *self.trick]
        if self.turned_up is not None:
            seen.append(self.turned_up)
        if len(set(seen)) != len(seen) or not set(seen) <= set(self.cards):
            raise inconsistent("a card appears twice or is not in this game's deck")
        if (self.turned_up is None) != (cards_each in (0, MAX_HAND)):
            raise inconsistent("a card is turned up exactly in the deals of fewer than 8 cards")
        made = [bid for bid in self.bids if bid is not None]
        if not self.deal_number:
            if seen or made:
                raise inconsistent("nothing is dealt before the first deal")
            return
        if self._phase == BID_PHASE:
            self._check_bidding()
            return
        if len(made) != players:
            raise inconsistent("every seat bids before the first card is played")
        if sum(made) == cards_each:
            raise inconsistent("the bids may not total the number of cards")
        if self._phase == PLAY_PHASE:
            self._check_playing()
            return
        if any(self.hands) or self.trick or len(self.tricks) != cards_each:
            raise inconsistent("between deals every trick has been played")
        last = self.deal_scores[-1]
        for seat, bid in enumerate(made):
            score = deal_score(bid, self.tricks_won[seat])
            if last[seat] not in (score, score + (STREAK_BONUS if score > 0 else -STREAK_BONUS)):
                raise inconsistent(f"seat {seat}'s score does not match its bid and tricks")

    def _check_bidding(self) -> None:
        players = self.num_players
        if self.tricks or self.trick or any(len(hand) != self.cards_each for hand in self.hands):
            raise inconsistent("no card is played before the bidding ends")
        order = [(self.dealer + 1 + offset) % players for offset in range(players)]
        made = sum(bid is not None for bid in self.bids)
        if made == players or any(
            (self.bids[seat] is None) != (index >= made) for index, seat in enumerate(order)
        ):
            raise inconsistent("the seats bid in turn from the dealer's left, the dealer last")
        self.player = order[made]

    def _check_playing(self) -> None:
        players = self.num_players
        if len(self.tricks) >= self.cards_each:
            raise inconsistent("every trick is played but the deal is not scored")
        self.player = (self.leader + len(self.trick)) % players
        left = self.cards_each - len(self.tricks)
        for seat, hand in enumerate(self.hands):
            played_now = (seat - self.leader) % players < len(self.trick)
            if len(hand) + played_now != left:
                raise inconsistent("the hands do not match the tricks played")


WHIST = GameSpec(
    name="whist",
    title="Whist",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    options_type=WhistOptions,
    state_type=WhistState,
    ends_when_one_person_remains=True,
)
WhistState.spec = WHIST
