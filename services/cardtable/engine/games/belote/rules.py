"""Belote, as docs/rules.md#belote sets it out.

Four players in two teams, seats 0 and 2 against seats 1 and 3, with the 32 cards from 7 to ace.
Play and the deal go to the right (counter-clockwise): after seat s comes seat s - 1. Five cards
each, a card turned face up, two rounds of bidding for trump, the deal completed to eight cards,
eight tricks with the obligations to follow, to trump and to overtrump. The taking team must
score more than the other or lose every card point; the first team to 501 at the end of a deal
wins.

Dealing. The deck order is read from its top (``order[0]``) and dealt to the seats in the order
of play, starting with the dealer's right (seat ``dealer - 1``) and ending with the dealer:

* ``order[0:12]``: three cards to each seat in turn (the dealer's right gets 0-2, the next
  seat 3-5, ..., the dealer 9-11);
* ``order[12:20]``: two cards to each seat, in the same order;
* ``order[20]``: the card turned face up for everybody;
* ``order[21:32]``: the rest, used to complete the deal once trump is chosen. It is dealt on
  from ``order[21]`` in the same seat order, again from the dealer's right: three cards to each
  seat, but two to the taker, who also takes the turned card (3 + 3 + 3 + 2 = 11: every card is
  dealt). When everybody passes twice, the rest is never dealt and the cards are thrown in.

Readings of the rules made here: on a trump lead everybody must beat the highest trump if they
can, even when their partner is winning (the partner relaxation is written for the void case
only); the capot bonus is not counted when deciding whether the takers scored more (the rule
names card points plus belote); belote is known to its holder at once and told to the others
only when the deal is scored (``BeloteScored``); ``DealStarted.cards_each`` is 8, the hand size
once the deal is completed; ``TrickWon.points`` of the last trick include its 10, so the tricks
of a deal add up to 162.

A thrown-in deal scores nothing but still counts as a deal: it is recorded in ``deal_scores`` as
a row of zeros (with a ``DealScored`` fact), so there is one row per deal number and the totals
stay the sum of the rows.

>>> state = BELOTE.new_game(4, {}, first_dealer=0)
>>> facts = state.deal(DECK)
>>> state.phase, state.to_act(), format_card(state.turned_card)
(<Phase.BID: 'bid'>, (3,), 'JH')
>>> facts = state.apply(3, TAKE)
>>> SUIT_LETTERS[state.trump], state.taker, state.to_act(), [len(hand) for hand in state.hands]
('H', 3, (0,), [8, 8, 8, 8])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cardtable.engine.actions import (
    NAME_TRUMP,
    PASS,
    PASS_BID,
    PLAY,
    PLAY_CARD,
    TAKE,
    TAKE_TRUMP,
    Action,
    format_action,
    name_trump,
    parse_action,
)
from cardtable.engine.cards import (
    ACE,
    EIGHT,
    JACK,
    KING,
    NINE,
    QUEEN,
    RANK_OF,
    SEVEN,
    SUIT_LETTERS,
    SUIT_NAMES,
    SUIT_OF,
    SUITS,
    TEN,
    Card,
    deck_of_ranks,
    format_card,
    make_card,
    parse_card,
)
from cardtable.engine.errors import InvalidInput
from cardtable.engine.facts import (
    CARD_PLAYED,
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
from cardtable.engine.games.belote.phases import Phase
from cardtable.engine.interchangeable import interchangeable_groups, known_to
from cardtable.engine.snapshot import (
    cards_from_json,
    cards_json,
    check_each_card_once,
    inconsistent,
    read_cards,
    read_int,
    read_list,
    read_optional_int,
    read_phase,
    read_str,
    require,
)

# The phases as module globals for the checks made on every action: reading a global costs
# less than looking a member up on its enum class, which is a descriptor call on Python 3.11.
DEAL_PHASE, BID_PHASE, PLAY_PHASE, OVER_PHASE = Phase.DEAL, Phase.BID, Phase.PLAY, Phase.OVER

PLAYERS = 4
HAND_SIZE = 8
DECK: tuple[Card, ...] = deck_of_ranks(SEVEN)

#: Seats 0 and 2 play against seats 1 and 3; a seat's team is ``seat % 2``.
TEAMS: tuple[tuple[int, ...], ...] = ((0, 2), (1, 3))

#: The seat after ``seat`` in play and deal order: its right, seat - 1 (docs/rules.md, Belote).
NEXT_SEAT: tuple[int, ...] = tuple((seat - 1) % PLAYERS for seat in range(PLAYERS))

FIRST_PACKET = 3  # "3 cards to each, then 2 to each"
SECOND_PACKET = 2
DEALT_BEFORE_BIDDING = FIRST_PACKET + SECOND_PACKET
TURNED_INDEX = PLAYERS * DEALT_BEFORE_BIDDING  # order[20]
TAKER_COMPLETION = 2  # "the taker gets the turned card and 2 more"
OTHERS_COMPLETION = 3  # "the others get 3 more each"

LAST_TRICK_BONUS = 10
ALL_CARD_POINTS = 162
BELOTE_POINTS = 20
CAPOT_BONUS = 252
SOLO_CAPOT_BONUS = 350
TARGET = 501


#: Rank orders, highest first (docs/rules.md, Belote: "Card order").
TRUMP_ORDER = (JACK, NINE, ACE, TEN, KING, QUEEN, EIGHT, SEVEN)
PLAIN_ORDER = (ACE, TEN, KING, QUEEN, JACK, NINE, EIGHT, SEVEN)
#: Card points by rank (docs/rules.md, Belote: "Card points"); ranks not listed are worth 0.
TRUMP_POINTS = {JACK: 20, NINE: 14, ACE: 11, TEN: 10, KING: 4, QUEEN: 3}
PLAIN_POINTS = {ACE: 11, TEN: 10, KING: 4, QUEEN: 3, JACK: 2}

_TRUMP_BASE = len(PLAIN_ORDER)  # every trump beats every card of another suit


def _strength_table(trump: int) -> tuple[int, ...]:
    """``table[card]``: 8 + its place in the trump order for a trump, else its place in its suit.

    A trick is won by its highest trump, or by the highest card of the suit led: comparing these
    numbers among the cards that are trumps or of the suit led finds the winner in one pass.
    """
    table = []
    for card in range(52):
        rank = RANK_OF[card]
        if rank < SEVEN:
            table.append(-1)
        elif SUIT_OF[card] == trump:
            table.append(_TRUMP_BASE + len(TRUMP_ORDER) - 1 - TRUMP_ORDER.index(rank))
        else:
            table.append(len(PLAIN_ORDER) - 1 - PLAIN_ORDER.index(rank))
    return tuple(table)


def _points_table(trump: int) -> tuple[int, ...]:
    return tuple(
        (TRUMP_POINTS if SUIT_OF[card] == trump else PLAIN_POINTS).get(RANK_OF[card], 0)
        for card in range(52)
    )


#: ``STRENGTH[trump][card]`` and ``POINTS[trump][card]``, precomputed for the four trump suits so
#: the play loop does table look-ups only.
STRENGTH: tuple[tuple[int, ...], ...] = tuple(_strength_table(trump) for trump in SUITS)
POINTS: tuple[tuple[int, ...], ...] = tuple(_points_table(trump) for trump in SUITS)

#: ``name X`` for each suit, preallocated; ``NAME_BIDS[turned suit]`` lists the legal round-2 bids.
NAME_ACTIONS: tuple[Action, ...] = tuple(name_trump(SUIT_LETTERS[suit]) for suit in SUITS)
#: The letters ``name X`` accepts.
NAME_CHOICES = frozenset(SUIT_LETTERS)
TAKE_BIDS: tuple[Action, ...] = (TAKE, PASS_BID)
NAME_BIDS: tuple[tuple[Action, ...], ...] = tuple(
    (*(NAME_ACTIONS[suit] for suit in SUITS if suit != turned), PASS_BID) for turned in SUITS
)


@dataclass(frozen=True)
class BeloteOptions:
    """Table options for Belote: none, docs/rules.md fixes every rule of the game."""


class TrumpBidMade(NamedTuple):
    """``seat`` spoke in bidding round ``bid_round`` (1 or 2): ``take``, ``name X`` or ``pass``."""

    seat: int
    bid_round: int
    bid: str
    audience: tuple[int, ...] | None = None


class TurnedCardTaken(NamedTuple):
    """The taker picked up the turned card; everybody saw it, so it stays public."""

    seat: int
    card: int
    audience: tuple[int, ...] | None = None


class DealThrownIn(NamedTuple):
    """Everybody passed twice: the cards are thrown in and the next dealer deals."""

    deal_number: int
    dealer: int
    audience: tuple[int, ...] | None = None


class BeloteScored(NamedTuple):
    """``seat`` held the king and queen of trump: 20 for its team, told when the deal is scored."""

    seat: int
    points: int = BELOTE_POINTS
    audience: tuple[int, ...] | None = None


class CapotMade(NamedTuple):
    """The team of ``seats`` won all eight tricks; ``seat`` is set when one player won them all."""

    seats: tuple[int, ...]
    bonus: int
    seat: int | None = None
    audience: tuple[int, ...] | None = None


class ContractSettled(NamedTuple):
    """Whether the taking team scored more than the other (card points plus belote each)."""

    taker: int
    made: bool
    taker_points: int
    defender_points: int
    audience: tuple[int, ...] | None = None


def team_scores(
    taker_team: int,
    card_points: Sequence[int],
    belote: Sequence[int],
    capot_bonus: Sequence[int],
) -> tuple[tuple[int, int], bool]:
    """Each team's score for a deal, and whether the taking team made its contract.

    All sequences are indexed by team (0: seats 0 and 2, 1: seats 1 and 3). docs/rules.md, Belote:
    the taking team must score more than the other, each side counting its card points plus
    its belote; if it does not, the other team scores all 162 card points plus any capot bonus
    of its own, and the taking team keeps only its belote, which always stays with its owners.

    >>> team_scores(0, (90, 72), (20, 0), (0, 0))
    ((110, 72), True)
    >>> team_scores(0, (70, 92), (20, 0), (0, 0))
    ((20, 162), False)
    >>> team_scores(1, (81, 81), (0, 0), (0, 0))
    ((162, 0), False)
    """
    defence = 1 - taker_team
    made = card_points[taker_team] + belote[taker_team] > card_points[defence] + belote[defence]
    scores = [card_points[team] + capot_bonus[team] + belote[team] for team in (0, 1)]
    if not made:
        scores[defence] = ALL_CARD_POINTS + capot_bonus[defence] + belote[defence]
        scores[taker_team] = belote[taker_team]
    return (scores[0], scores[1]), made


class BeloteState(TrickGameState):
    """A game of Belote in progress."""

    play_phase = PLAY_PHASE
    _phase: Phase

    def __init__(self, num_players: int, options: BeloteOptions, first_dealer: int) -> None:
        super().__init__(num_players, options, first_dealer)
        self._phase = DEAL_PHASE
        self._clear_deal()

    def _clear_deal(self) -> None:
        """Blank every per-deal field: between deals the table holds no cards."""
        self.hands: list[list[Card]] = [[] for _ in range(PLAYERS)]
        self.stock: list[Card] = []
        self.turned_card = -1
        self.bids: list[tuple[int, Action]] = []
        self.trump = -1
        self.taker: int | None = None
        self.player = 0
        self.leader = 0
        self.trick: list[Card] = []
        self.winner = 0  # the seat winning the trick in progress
        self.win_strength = -1  # STRENGTH of its card; >= 8 once the trick holds a trump
        self.strength: tuple[int, ...] = STRENGTH[0]
        self.tricks: list[tuple[int, tuple[Card, ...], int]] = []
        self.tricks_won = [0] * PLAYERS
        self.team_points = [0, 0]
        self.belote_seat: int | None = None

    # -- dealing ---------------------------------------------------------------------------
    def deck(self) -> tuple[Card, ...]:
        return DECK

    def needs_deal(self) -> bool:
        return self._phase == DEAL_PHASE

    def _deal(self, order: tuple[Card, ...]) -> list[Fact]:
        """Deal five cards each and turn one up (module docstring, "Dealing")."""
        self._start_next_deal(direction=-1)
        self._clear_deal()
        first = NEXT_SEAT[self.dealer]
        for position in range(PLAYERS):
            seat = (first - position) % PLAYERS
            start = position * FIRST_PACKET
            second = PLAYERS * FIRST_PACKET + position * SECOND_PACKET
            self.hands[seat] = sorted(
                order[start : start + FIRST_PACKET] + order[second : second + SECOND_PACKET]
            )
        self.turned_card = order[TURNED_INDEX]
        self.stock = list(order[TURNED_INDEX + 1 :])
        self.player = first
        self._phase = BID_PHASE
        facts: list[Fact] = [DealStarted(self.deal_number, self.dealer, HAND_SIZE)]
        facts.extend(
            CardsDealt(seat, tuple(self.hands[seat]), (seat,)) for seat in self._deal_order()
        )
        facts.append(CardTurnedUp(self.turned_card))
        return facts

    def _deal_order(self) -> list[int]:
        """The seats from the dealer's right round to the dealer."""
        return [(self.dealer - 1 - position) % PLAYERS for position in range(PLAYERS)]

    # -- turns -----------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def bid_round(self) -> int:
        """1 while the turned card's suit is offered, 2 once everybody has refused it."""
        return 1 if len(self.bids) < PLAYERS else 2

    def to_act(self) -> tuple[int, ...]:
        if self._phase == PLAY_PHASE or self._phase == BID_PHASE:
            return (self.player,)
        return ()

    def interchangeable_plays(self, seat: int, cards: Sequence[Card]) -> list[list[Card]]:
        """Touching cards in the trick order of this deal's trump with equal points: the
        plain 9, 8 and 7, the trump 8 and 7."""
        if self.trump < 0:
            return super().interchangeable_plays(seat, cards)
        known = known_to(self.hands[seat], self.tricks)
        strength, points = STRENGTH[self.trump], POINTS[self.trump]
        return interchangeable_groups(
            cards, known, self.deck(), strength.__getitem__, points.__getitem__
        )

    def legal_actions(self, seat: int) -> list[Action]:
        if seat != self.player:
            return []
        if self._phase == PLAY_PHASE:
            return [PLAY[card] for card in self._playable(self.hands[seat])]
        if self._phase == BID_PHASE:
            if len(self.bids) < PLAYERS:
                return list(TAKE_BIDS)
            return list(NAME_BIDS[SUIT_OF[self.turned_card]])
        return []

    def _playable(self, hand: list[Card]) -> list[Card]:
        """The cards of ``hand`` the player to act may play (the hot path of every playout).

        docs/rules.md, Belote, "Play": follow suit; on a trump lead, beat the highest trump if you
        can; void in the suit led, trump (over the highest trump if you can) unless your
        partner is winning the trick; with no trump, anything.
        """
        trick = self.trick
        if not trick:
            return hand
        trump = self.trump
        led = SUIT_OF[trick[0]]
        if led == trump:
            trumps = [card for card in hand if SUIT_OF[card] == trump]
            if not trumps:
                return hand
            strength, best = self.strength, self.win_strength
            return [card for card in trumps if strength[card] > best] or trumps
        follow = [card for card in hand if SUIT_OF[card] == led]
        if follow:
            return follow
        if self.winner == (self.player + 2) % PLAYERS:
            return hand
        trumps = [card for card in hand if SUIT_OF[card] == trump]
        if not trumps:
            return hand
        strength, best = self.strength, self.win_strength
        return [card for card in trumps if strength[card] > best] or trumps

    def _why_illegal(self, seat: int, action: Action) -> str | None:
        if self._phase == BID_PHASE:
            return self._why_bid_illegal(action)
        if action.kind != PLAY_CARD:
            return "it is time to play a card"
        return self._why_play_illegal(seat, action.card)

    def _why_bid_illegal(self, action: Action) -> str | None:
        """docs/rules.md, Belote, "Bidding": round 1 take or pass, round 2 name another suit or
        pass."""
        kind = action.kind
        if kind == PASS:
            return None
        turned_suit = SUIT_NAMES[SUIT_OF[self.turned_card]]
        if self.bid_round == 1:
            if kind == TAKE_TRUMP:
                return None
            if kind == NAME_TRUMP:
                return f"in the first round you may only take {turned_suit} as trump or pass"
            return f"it is time to take {turned_suit} as trump or pass"
        if kind == TAKE_TRUMP:
            return f"everybody refused {turned_suit}: name another suit as trump or pass"
        if kind != NAME_TRUMP:
            return "it is time to name a trump suit or pass"
        if action.choice not in NAME_CHOICES:
            return "name a suit as trump: C, D, H or S"
        if SUIT_LETTERS.index(action.choice) == SUIT_OF[self.turned_card]:
            return f"{turned_suit} was refused in the first round: name another suit"
        return None

    def _why_play_illegal(self, seat: int, card: Card) -> str | None:
        hand = self.hands[seat]
        if card not in hand:
            return f"you do not hold {format_card(card)}"
        trick = self.trick
        if not trick:
            return None
        led = SUIT_OF[trick[0]]
        suit = SUIT_OF[card]
        if suit == led and led != self.trump:  # following a plain suit is always allowed
            return None
        if card in self._playable(hand):
            return None
        # The card breaks a rule of "Play" (docs/rules.md, Belote): say which one.
        if suit != led and any(SUIT_OF[other] == led for other in hand):
            return f"you must follow {SUIT_NAMES[led]}"
        if suit != self.trump:
            return "you must trump"
        return "you must play a higher trump"

    # -- applying --------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> list[Fact]:
        if self._phase == BID_PHASE:
            return self._apply_bid(seat, action)
        return self._apply_play(seat, action.card)

    def _apply_bid(self, seat: int, action: Action) -> list[Fact]:
        bid_round = self.bid_round
        action = _canonical_bid(action)
        self.bids.append((seat, action))
        facts: list[Fact] = [TrumpBidMade(seat, bid_round, format_action(action))]
        if action is PASS_BID:
            if len(self.bids) == 2 * PLAYERS:
                return facts + self._throw_in()
            self.player = NEXT_SEAT[seat]
            return facts
        if action.kind == TAKE_TRUMP:
            trump = SUIT_OF[self.turned_card]
        else:
            trump = SUIT_LETTERS.index(action.choice)
        facts.append(TrumpChosen(SUIT_LETTERS[trump], seat))
        facts.extend(self._complete_deal(seat, trump))
        return facts

    def _throw_in(self) -> list[Fact]:
        """docs/rules.md, Belote: all passed twice, the cards are thrown in; the deal scores 0."""
        facts: list[Fact] = [DealThrownIn(self.deal_number, self.dealer)]
        totals = self._record_deal_scores([0] * PLAYERS)
        facts.append(DealScored(self.deal_number, (0,) * PLAYERS, totals))
        self._clear_deal()
        self._phase = DEAL_PHASE
        return facts

    def _complete_deal(self, taker: int, trump: int) -> list[Fact]:
        """Give the taker the turned card and 2 more, the others 3 each (module docstring)."""
        self.taker = taker
        self._set_trump(trump)
        facts: list[Fact] = [TurnedCardTaken(taker, self.turned_card)]
        stock = self.stock
        taken = 0
        for seat in self._deal_order():
            count = TAKER_COMPLETION if seat == taker else OTHERS_COMPLETION
            cards = stock[taken : taken + count]
            taken += count
            facts.append(CardsDealt(seat, tuple(cards), (seat,)))
            self.hands[seat].extend(cards)
        self.hands[taker].append(self.turned_card)
        for hand in self.hands:
            hand.sort()
        self.stock = []
        self.belote_seat = self._belote_holder()
        # The dealer leads the first trick (docs/rules.md, Belote: seed wording).
        self.leader = self.player = self.dealer
        self._phase = PLAY_PHASE
        return facts

    def _set_trump(self, trump: int) -> None:
        self.trump = trump
        self.strength = STRENGTH[trump]

    def _belote_holder(self) -> int | None:
        """The seat dealt both the king and queen of trump, from its hand and the cards it played.

        docs/rules.md, Belote: "holding both the K and Q of trump after the deal is completed".
        """
        owners = self._owners()
        holder = owners.get(make_card(KING, self.trump))
        if holder is not None and owners.get(make_card(QUEEN, self.trump)) == holder:
            return holder
        return None

    def _owners(self) -> dict[Card, int]:
        """The seat each card of the deal belongs to: in its hand, or played by it."""
        owners = {card: seat for seat, hand in enumerate(self.hands) for card in hand}
        for leader, cards, _ in [*self.tricks, (self.leader, tuple(self.trick), -1)]:
            for position, card in enumerate(cards):
                owners[card] = (leader - position) % PLAYERS
        return owners

    def _apply_play(self, seat: int, card: Card) -> list[Fact]:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append(card)
        strength = self.strength[card]
        suit = SUIT_OF[card]
        # The trick's first card leads; a later one wins only as a trump or in the suit led.
        if len(trick) == 1 or (
            strength > self.win_strength and (suit == self.trump or suit == SUIT_OF[trick[0]])
        ):
            self.winner, self.win_strength = seat, strength
        played = CARD_PLAYED[seat][card]
        if len(trick) < PLAYERS:
            self.player = NEXT_SEAT[seat]
            return [played]
        return [played, *self._finish_trick()]

    def _finish_trick(self) -> list[Fact]:
        trick = self.trick
        points_of = POINTS[self.trump]
        points = points_of[trick[0]] + points_of[trick[1]] + points_of[trick[2]]
        points += points_of[trick[3]]
        winner = self.winner
        cards = tuple(trick)
        self.tricks.append((self.leader, cards, winner))
        if len(self.tricks) == HAND_SIZE:
            points += LAST_TRICK_BONUS
        self.tricks_won[winner] += 1
        self.team_points[winner % 2] += points
        facts: list[Fact] = [TrickWon(len(self.tricks), self.leader, winner, cards, points)]
        self.trick = []
        self.leader = self.player = winner
        if len(self.tricks) == HAND_SIZE:
            facts.extend(self._score_deal())
        return facts

    def _score_deal(self) -> list[Fact]:
        """docs/rules.md, Belote: belote, capot, the contract, then the 501 end."""
        assert self.taker is not None
        facts: list[Fact] = []
        belote = [0, 0]
        if self.belote_seat is not None:
            belote[self.belote_seat % 2] = BELOTE_POINTS
            facts.append(BeloteScored(self.belote_seat))
        capot_bonus = [0, 0]
        for team, seats in enumerate(TEAMS):
            if sum(self.tricks_won[seat] for seat in seats) == HAND_SIZE:
                solo = next((s for s in seats if self.tricks_won[s] == HAND_SIZE), None)
                capot_bonus[team] = CAPOT_BONUS if solo is None else SOLO_CAPOT_BONUS
                facts.append(CapotMade(seats, capot_bonus[team], solo))
        taker_team = self.taker % 2
        scores, made = team_scores(taker_team, self.team_points, belote, capot_bonus)
        facts.append(
            ContractSettled(
                self.taker,
                made,
                self.team_points[taker_team] + belote[taker_team],
                self.team_points[1 - taker_team] + belote[1 - taker_team],
            )
        )
        seat_scores = tuple(scores[seat % 2] for seat in range(PLAYERS))
        totals = self._record_deal_scores(seat_scores)
        facts.append(DealScored(self.deal_number, seat_scores, totals))
        self._clear_deal()
        if _game_won(totals):
            self._phase = OVER_PHASE
            facts.append(self._end_game())
        else:
            self._phase = DEAL_PHASE
        return facts

    # -- results and views -----------------------------------------------------------------
    def progress(self) -> float:
        """The leading team's total over 501, capped at 1 (1 once the game is over).

        Belote has no fixed number of deals, so "the fraction of the game's deals completed"
        (docs/rules.md, leavers) is read as how far the leading team is towards the 501 that ends
        the game: the same reading as Hearts' classic game and its 100.
        """
        if self.over:
            return 1.0
        return min(1.0, max(self.totals) / TARGET)

    def _observation(self, seat: int | None) -> dict[str, Any]:
        own = seat is not None and 0 <= seat < PLAYERS
        belote_known = self.belote_seat is not None and own and self.belote_seat == seat
        return {
            "hand": cards_json(self.hands[seat]) if own and seat is not None else [],
            "hand_sizes": [len(hand) for hand in self.hands],
            "teams": [list(seats) for seats in TEAMS],
            "team_totals": [self.totals[0], self.totals[1]],
            "target": TARGET,
            "turned_card": format_card(self.turned_card) if self.turned_card >= 0 else None,
            "bid_round": self.bid_round if self._phase == BID_PHASE else None,
            "bids": [{"seat": bidder, "bid": format_action(bid)} for bidder, bid in self.bids],
            "trump": SUIT_LETTERS[self.trump] if self.trump >= 0 else None,
            "taker": self.taker,
            "trick": trick_json(self.leader, self.trick, PLAYERS, direction=-1),
            "leader": self.leader if self._phase == PLAY_PHASE else None,
            "tricks": tricks_json(self.tricks),
            "tricks_won": list(self.tricks_won),
            "team_points": list(self.team_points),
            # Belote is told to the others only when the deal is scored (BeloteScored).
            "belote": belote_known,
        }

    def clone(self) -> BeloteState:
        other = self._shallow_copy()
        other.hands = [list(hand) for hand in self.hands]
        other.stock = list(self.stock)
        other.bids = list(self.bids)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.tricks_won = list(self.tricks_won)
        other.team_points = list(self.team_points)
        return other

    # -- snapshots -------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        """The game's fields; the trick's winner, points, tricks won and belote are derived."""
        return {
            "phase": self._phase,
            "hands": [cards_json(hand) for hand in self.hands],
            "stock": cards_json(self.stock),
            "turned_card": format_card(self.turned_card) if self.turned_card >= 0 else None,
            "bids": [{"seat": bidder, "bid": format_action(bid)} for bidder, bid in self.bids],
            "trump": SUIT_LETTERS[self.trump] if self.trump >= 0 else None,
            "taker": self.taker,
            "trick": cards_json(self.trick),
            "leader": self.leader,
            "player": self.player,
            "tricks": tricks_json(self.tricks),
        }

    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        phase = read_phase(data, "phase", Phase)
        if (phase == OVER_PHASE) != self.over:
            raise inconsistent("the phase and the end of the game disagree")
        self._check_scores(phase)
        self._clear_deal()
        self._phase = phase
        if phase in (DEAL_PHASE, OVER_PHASE):
            self._check_between_deals(data)
            return
        if self.deal_number == 0:
            raise inconsistent("no deal has been dealt yet")
        self._load_hidden_places(data)
        turned = require(data, "turned_card")
        if not isinstance(turned, str):
            raise InvalidInput("snapshot field 'turned_card' must be a card")
        self.turned_card = parse_card(turned)
        self._load_bids(data)
        self.trick = read_cards(data, "trick", PLAYERS - 1)
        self.leader = read_int(data, "leader", 0, PLAYERS - 1)
        self.player = read_int(data, "player", 0, PLAYERS - 1)
        tricks_data = read_list(data, "tricks", HAND_SIZE)
        for trick in tricks_data:
            leader = read_int(trick, "leader", 0, PLAYERS - 1)
            cards = tuple(cards_from_json(require(trick, "cards"), "tricks", PLAYERS))
            winner = read_int(trick, "winner", 0, PLAYERS - 1)
            if len(cards) != PLAYERS:
                raise inconsistent("a finished trick holds four cards")
            self.tricks.append((leader, cards, winner))
        if phase == BID_PHASE:
            self._check_bidding()
        else:
            self._check_play()

    def _load_hidden_places(self, data: Mapping[str, Any]) -> bool:
        """The hands and the stock: what a seat may not see."""
        hands_data = read_list(data, "hands", PLAYERS)
        if len(hands_data) != PLAYERS:
            raise inconsistent("Belote has four hands")
        self.hands = [sorted(cards_from_json(hand, "hands", HAND_SIZE)) for hand in hands_data]
        self.stock = read_cards(data, "stock", len(DECK) - TURNED_INDEX - 1)
        return True

    def with_hidden_cards(self, data: Mapping[str, Any]) -> BeloteState | None:
        """The hands and the stock, and who holds the belote, which the hands decide."""
        other = super().with_hidden_cards(data)
        if other is not None and other._phase == PLAY_PHASE:
            other.belote_seat = other._belote_holder()
        return other

    def _check_scores(self, phase: str) -> None:
        """Both members of a team score alike; one row per finished deal; the end is right."""
        for row in [*self.deal_scores, tuple(self.totals)]:
            if row[0] != row[2] or row[1] != row[3]:
                raise inconsistent("both members of a team have the same score")
        finished = self.deal_number - (phase in (BID_PHASE, PLAY_PHASE))
        if len(self.deal_scores) != finished:
            raise inconsistent("there is one row of scores per finished deal")
        if _game_won(self.totals) != (phase == OVER_PHASE):
            raise inconsistent("the game is over exactly when a team has won")

    def _check_between_deals(self, data: Mapping[str, Any]) -> None:
        hands = read_list(data, "hands", PLAYERS)
        if any(hand for hand in hands) or read_cards(data, "stock") or read_cards(data, "trick"):
            raise inconsistent("no card is on the table between deals")
        if read_list(data, "tricks", HAND_SIZE) or read_list(data, "bids", 2 * PLAYERS):
            raise inconsistent("no trick or bid is kept between deals")
        if require(data, "turned_card") is not None or require(data, "trump") is not None:
            raise inconsistent("no card is turned up between deals")
        if require(data, "taker") is not None:
            raise inconsistent("nobody has taken between deals")

    def _load_bids(self, data: Mapping[str, Any]) -> None:
        """Read the bids, and trump and taker, which must agree with the last bid."""
        bids_data = read_list(data, "bids", 2 * PLAYERS)
        for position, entry in enumerate(bids_data):
            seat = read_int(entry, "seat", 0, PLAYERS - 1)
            text = require(entry, "bid")
            if not isinstance(text, str):
                raise InvalidInput("snapshot field 'bid' must be text")
            if seat != (self.dealer - 1 - position) % PLAYERS:
                raise inconsistent("the bids do not go round from the dealer's right")
            self.bids.append((seat, parse_action(text)))
        trump_letter = require(data, "trump")
        if trump_letter is not None:
            self._set_trump(SUIT_LETTERS.index(read_str(data, "trump", list(SUIT_LETTERS))))
        self.taker = read_optional_int(data, "taker", 0, PLAYERS - 1)

    def _check_bidding(self) -> None:
        check_each_card_once([*self.hands, self.stock, [self.turned_card]], DECK)
        if any(len(hand) != DEALT_BEFORE_BIDDING for hand in self.hands) or self.trick:
            raise inconsistent("during bidding each seat holds five cards and none is played")
        if self.tricks or self.trump >= 0 or self.taker is not None:
            raise inconsistent("nobody has taken yet")
        if len(self.bids) >= 2 * PLAYERS or any(bid != PASS_BID for _, bid in self.bids):
            raise inconsistent("bidding ends at the first take or name, or after eight passes")
        if self.player != (self.dealer - 1 - len(self.bids)) % PLAYERS:
            raise inconsistent("the seat to bid does not follow the bids")

    def _check_play(self) -> None:
        played = [card for _, cards, _ in self.tricks for card in cards]
        check_each_card_once([*self.hands, played, self.trick], DECK)
        if self.stock:
            raise inconsistent("the stock is dealt before play")
        bids = self.bids
        if not bids or any(bid != PASS_BID for _, bid in bids[:-1]):
            raise inconsistent("play starts after a take or a name that ends bidding")
        taker, last = bids[-1]
        turned_suit = SUIT_OF[self.turned_card]
        if len(bids) <= PLAYERS:
            expected = turned_suit if last == TAKE else -1
        else:
            choice = last.choice if last.kind == NAME_TRUMP else ""
            named = SUIT_LETTERS.index(choice) if choice in NAME_CHOICES else -1
            expected = named if named != turned_suit else -1
        if expected < 0 or self.trump != expected or self.taker != taker:
            raise inconsistent("trump and taker do not follow from the bids")
        leader = self.dealer
        for trick_leader, cards, winner in self.tricks:
            if trick_leader != leader or winner != self._trick_winner(trick_leader, cards):
                raise inconsistent("the tricks' leaders and winners do not follow the play")
            leader = winner
        if self.leader != leader:
            raise inconsistent("the leader is not the last trick's winner")
        if self.player != (self.leader - len(self.trick)) % PLAYERS:
            raise inconsistent("the player to act does not follow the leader")
        if self._owners().get(self.turned_card) != taker:
            raise inconsistent("the turned card belongs to the taker")
        if len(self.tricks) >= HAND_SIZE:
            raise inconsistent("a deal whose eight tricks are played is scored at once")
        left = HAND_SIZE - len(self.tricks)
        for seat, hand in enumerate(self.hands):
            has_played = (self.leader - seat) % PLAYERS < len(self.trick)
            if len(hand) + has_played != left:
                raise inconsistent("the hands do not match the tricks played")
        for trick_number, (_, cards, winner) in enumerate(self.tricks, start=1):
            points = sum(POINTS[self.trump][card] for card in cards)
            self.team_points[winner % 2] += points
            self.tricks_won[winner] += 1
            if trick_number == HAND_SIZE:
                self.team_points[winner % 2] += LAST_TRICK_BONUS
        if self.trick:
            self.winner = self._trick_winner(self.leader, self.trick)
            self.win_strength = self.strength[self.trick[(self.leader - self.winner) % PLAYERS]]
        self.belote_seat = self._belote_holder()

    def _trick_winner(self, leader: int, cards: Sequence[Card]) -> int:
        """The seat that won a finished trick: highest trump, else highest of the suit led."""
        led = SUIT_OF[cards[0]]
        best = 0
        for position in range(1, len(cards)):
            card = cards[position]
            if SUIT_OF[card] in (self.trump, led) and (
                self.strength[card] > self.strength[cards[best]]
            ):
                best = position
        return (leader - best) % PLAYERS


def _canonical_bid(action: Action) -> Action:
    """The preallocated action equal in meaning to a legal bid, so bids compare by identity."""
    if action.kind == PASS:
        return PASS_BID
    if action.kind == TAKE_TRUMP:
        return TAKE
    return NAME_ACTIONS[SUIT_LETTERS.index(action.choice)]


def _game_won(totals: Sequence[int]) -> bool:
    """docs/rules.md, Belote, "End": a team has 501 or more, and the two teams are not level."""
    return max(totals) >= TARGET and totals[0] != totals[1]


BELOTE = GameSpec(
    name="belote",
    title="Belote",
    min_players=PLAYERS,
    max_players=PLAYERS,
    options_type=BeloteOptions,
    state_type=BeloteState,
    teams=TEAMS,
    direction=-1,
)
BeloteState.spec = BELOTE
