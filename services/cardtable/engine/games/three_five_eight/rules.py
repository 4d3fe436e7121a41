"""3-5-8, as docs/rules.md#3-5-8 sets it out.

Three players, 52 cards, ace high, play to the left. The player left of the dealer is the
declarer and must take 8 tricks, the third player (right of the dealer) 5 and the dealer 3; in
minimum tricks (MT) those numbers are limits instead: at most 3, 5 and 8. Over the game's 18
deals each player declares 6 times and chooses each of the six contracts exactly once: spades,
hearts, diamonds or clubs as trump, no trump (NT) and MT.

One deal goes through these phases:

1. ``contract``: every seat sees only its first 6 cards; the declarer chooses the contract.
2. The other 10 cards are shown to their owners. In a trump contract after the first deal, the
   ``exchange`` phase settles the previous deal's scores: each creditor gives a debtor a card
   outside the trump suit and gets back the debtor's highest card of that suit.
3. ``discard``: the declarer takes the four talon cards and puts four of the twenty away face
   down; they count for nobody.
4. ``play``: 16 tricks, the declarer leads the first.

Dealing: the deck order is dealt one card at a time, starting left of the dealer (the declarer)
and going left, for 16 rounds; the last 4 cards of the order are the talon. A seat's "first 6
cards" are those of rounds 1 to 6. With the dealer at seat ``d`` the declarer gets
``order[0], order[3], order[6], ...``, the third player ``order[1], order[4], ...``, the dealer
``order[2], order[5], ...`` and the talon is ``order[48:52]``.

>>> from cardtable.engine.cards import FULL_DECK
>>> state = THREE_FIVE_EIGHT.new_game(3, {}, first_dealer=2)
>>> facts = state.deal(FULL_DECK)
>>> state.phase, state.to_act(), state.observation(0)["hand"]
(<Phase.CONTRACT: 'contract'>, (0,), ['2C', '5C', '8C', 'JC', 'AC', '4D'])
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, NamedTuple, TypeVar

from cardtable.engine.actions import (
    CHOOSE_CONTRACT,
    DISCARD,
    GIVE,
    GIVE_CARD,
    PLAY,
    PLAY_CARD,
    Action,
    choose_contract,
    discard,
)
from cardtable.engine.cards import (
    FULL_DECK,
    SUIT_LETTERS,
    SUIT_NAMES,
    SUIT_OF,
    Card,
    format_card,
    trick_winner,
)
from cardtable.engine.facts import (
    CARD_PLAYED,
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
from cardtable.engine.games.three_five_eight.phases import Phase
from cardtable.engine.interchangeable import (
    by_card_number,
    interchangeable_groups,
    known_to,
    no_points,
)
from cardtable.engine.snapshot import (
    cards_from_json,
    cards_json,
    check_each_card_once,
    inconsistent,
    ints_from_json,
    read_cards,
    read_int,
    read_int_list,
    read_list,
    read_phase,
    read_str,
    require,
)

# The phases as module globals for the checks made on every action: reading a global costs
# less than looking a member up on its enum class, which is a descriptor call on Python 3.11.
DEAL_PHASE, CONTRACT_PHASE, EXCHANGE_PHASE, DISCARD_PHASE, PLAY_PHASE, OVER_PHASE = (
    Phase.DEAL,
    Phase.CONTRACT,
    Phase.EXCHANGE,
    Phase.DISCARD,
    Phase.PLAY,
    Phase.OVER,
)

#: Tricks are whole in a deal played, fractional where the search estimates them.
_Number = TypeVar("_Number", int, float)

PLAYERS = 3
HAND_SIZE = 16
FIRST_CARDS = 6
TALON_SIZE = 4
DEALS = 18


NO_TRUMP = "NT"
MINIMUM_TRICKS = "MT"
#: The six contracts, each chosen once per declarer over the game (docs/rules.md, 3-5-8).
CONTRACTS = ("S", "H", "D", "C", NO_TRUMP, MINIMUM_TRICKS)
CONTRACT_ACTIONS: dict[str, Action] = {
    contract: choose_contract(contract) for contract in CONTRACTS
}
CONTRACT_NAMES = {
    "S": "spades as trump",
    "H": "hearts as trump",
    "D": "diamonds as trump",
    "C": "clubs as trump",
    NO_TRUMP: NO_TRUMP,
    MINIMUM_TRICKS: MINIMUM_TRICKS,
}
#: Trump suit of each contract, -1 for none.
TRUMP_OF = {
    contract: SUIT_LETTERS.find(contract) if len(contract) == 1 else -1 for contract in CONTRACTS
}

#: Targets by seat offset from the dealer: dealer 3, declarer (left) 8, third (right) 5.
TARGETS = (3, 8, 5)
#: MT limits by seat offset from the dealer: dealer at most 8, declarer 3, third 5.
LIMITS = (8, 3, 5)


@dataclass(frozen=True)
class ThreeFiveEightOptions:
    """Table options for 3-5-8."""

    trump_beat: bool = field(
        default=False,
        metadata={"help": "a player void in the suit led must play a trump if they hold one"},
    )


class ContractChosen(NamedTuple):
    """The declarer ``seat`` chose ``contract`` (S, H, D, C, NT or MT) for this deal."""

    seat: int
    contract: str
    audience: tuple[int, ...] | None = None


class ExchangesOwed(NamedTuple):
    """Creditor ``seat`` must make ``number`` exchanges with debtor ``to_seat`` this deal."""

    seat: int
    to_seat: int
    number: int
    audience: tuple[int, ...] | None = None


class CardsExchanged(NamedTuple):
    """Creditor ``seat`` gave ``given_card`` to ``to_seat``, who gave back ``returned_card``.

    Only the two of them see the cards.
    """

    seat: int
    to_seat: int
    given_card: int
    returned_card: int
    audience: tuple[int, ...] | None = None


class ExchangesSkipped(NamedTuple):
    """Creditor ``seat`` holds only trumps and so skips its ``number`` exchanges left."""

    seat: int
    number: int
    audience: tuple[int, ...] | None = None


class TalonTaken(NamedTuple):
    """The declarer ``seat`` took the talon ``cards``; only the declarer sees them."""

    seat: int
    cards: tuple[int, ...]
    audience: tuple[int, ...] | None = None


class CardsDiscarded(NamedTuple):
    """The declarer ``seat`` put ``cards`` away face down; only the declarer sees them."""

    seat: int
    cards: tuple[int, ...]
    audience: tuple[int, ...] | None = None


def _suit_bounds(hand: list[Card], suit: int) -> tuple[int, int]:
    """Where ``suit`` lies in a sorted hand: cards are ``suit * 13 + rank``, so suits are runs."""
    return bisect_left(hand, suit * 13), bisect_left(hand, suit * 13 + 13)


class ThreeFiveEightState(TrickGameState):
    """A game of 3-5-8 in progress."""

    play_phase = PLAY_PHASE
    _phase: Phase

    def __init__(self, num_players: int, options: ThreeFiveEightOptions, first_dealer: int) -> None:
        super().__init__(num_players, options, first_dealer)
        self._phase = DEAL_PHASE
        self.hands: list[list[Card]] = [[] for _ in range(PLAYERS)]
        self.first_cards: list[tuple[Card, ...]] = [() for _ in range(PLAYERS)]
        self.talon: tuple[Card, ...] = ()
        self.discarded: tuple[Card, ...] = ()
        self.contract = ""
        self.trump = -1
        self.used: list[list[str]] = [[] for _ in range(PLAYERS)]
        #: Exchanges still owed this deal, in settling order: (creditor, debtor, count).
        self.exchange_queue: list[tuple[int, int, int]] = []
        #: Exchanges made this deal: (creditor, debtor, given card, returned card).
        self.exchanges: list[tuple[int, int, Card, Card]] = []
        #: Creditors that held only trumps this deal: (creditor, exchanges skipped).
        self.skipped: list[tuple[int, int]] = []
        self.trick: list[Card] = []
        self.leader = 0
        self.player = 0
        self.tricks: list[tuple[int, tuple[Card, ...], int]] = []
        self.tricks_won = [0] * PLAYERS

    # -- seats -----------------------------------------------------------------------------
    @property
    def declarer(self) -> int:
        """The player left of the dealer, who chooses the contract and takes the talon."""
        return (self.dealer + 1) % PLAYERS

    @property
    def third(self) -> int:
        """The player right of the dealer (target 5)."""
        return (self.dealer + 2) % PLAYERS

    def targets(self) -> tuple[int, ...]:
        """Each seat's target (or limit, in MT) this deal."""
        table = LIMITS if self.contract == MINIMUM_TRICKS else TARGETS
        return tuple(table[(seat - self.dealer) % PLAYERS] for seat in range(PLAYERS))

    # -- dealing ---------------------------------------------------------------------------
    def deck(self) -> tuple[Card, ...]:
        return FULL_DECK

    def needs_deal(self) -> bool:
        return self._phase == DEAL_PHASE

    def _deal(self, order: tuple[Card, ...]) -> list[Fact]:
        self._start_next_deal(direction=1)
        first = self.declarer
        dealt = PLAYERS * HAND_SIZE
        by_seat = [order[(seat - first) % PLAYERS : dealt : PLAYERS] for seat in range(PLAYERS)]
        self.hands = [sorted(cards) for cards in by_seat]
        self.first_cards = [tuple(sorted(cards[:FIRST_CARDS])) for cards in by_seat]
        self.talon = order[dealt:]
        self.discarded = ()
        self.contract = ""
        self.trump = -1
        self.exchange_queue = []
        self.exchanges = []
        self.skipped = []
        self.trick = []
        self.tricks = []
        self.tricks_won = [0] * PLAYERS
        self._phase = CONTRACT_PHASE
        self.player = first
        facts: list[Fact] = [DealStarted(self.deal_number, self.dealer, HAND_SIZE)]
        # Rule: the contract is chosen on the first 6 cards only; the rest are shown after it.
        facts.extend(CardsDealt(seat, self.first_cards[seat], (seat,)) for seat in range(PLAYERS))
        return facts

    # -- turns -----------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    def to_act(self) -> tuple[int, ...]:
        if self._phase == DEAL_PHASE or self._phase == OVER_PHASE:
            return ()
        return (self.player,)

    def legal_actions(self, seat: int) -> list[Action]:
        phase = self._phase
        if seat != self.player or phase in (DEAL_PHASE, OVER_PHASE):
            return []
        if phase == PLAY_PHASE:
            return [PLAY[card] for card in self._playable(self.hands[seat])]
        if phase == CONTRACT_PHASE:
            used = self.used[seat]
            return [CONTRACT_ACTIONS[c] for c in CONTRACTS if c not in used]
        if phase == EXCHANGE_PHASE:
            return [GIVE[card] for card in self._givable(self.hands[seat])]
        # The hand is sorted, so every combination is already in the order discard() keeps.
        return [
            Action(DISCARD, cards=cards) for cards in combinations(self.hands[seat], TALON_SIZE)
        ]

    def card_set_choice(self, seat: int) -> CardSetChoice | None:
        if self._phase == DISCARD_PHASE and seat == self.player:
            return CardSetChoice(tuple(self.hands[seat]), TALON_SIZE, discard)
        return None

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
        """The cards of sorted ``hand`` a player may add to ``trick`` in this deal: how a bot
        reads a play it saw, on a hand it supposes the player held then. The trick's number (the
        interface Hearts needs) changes nothing here."""
        if not trick:
            return hand
        led = SUIT_OF[trick[0]] * 13
        low = bisect_left(hand, led)
        high = bisect_left(hand, led + 13, low)
        if low < high:
            return hand[low:high]
        trump = self.trump
        if trump >= 0 and self.options.trump_beat:
            low, high = _suit_bounds(hand, trump)
            if low < high:
                return hand[low:high]
        return hand

    def _givable(self, hand: list[Card]) -> list[Card]:
        """A creditor's cards outside the trump suit: no trump is ever exchanged."""
        low, high = _suit_bounds(hand, self.trump)
        return hand[:low] + hand[high:]

    def _why_illegal(self, seat: int, action: Action) -> str | None:
        phase = self._phase
        if phase == PLAY_PHASE:
            if action.kind != PLAY_CARD:
                return "it is time to play a card"
            return self._why_play_illegal(seat, action.card)
        if phase == CONTRACT_PHASE:
            return self._why_contract_illegal(seat, action)
        if phase == EXCHANGE_PHASE:
            return self._why_give_illegal(seat, action)
        return self._why_discard_illegal(seat, action)

    def _why_contract_illegal(self, seat: int, action: Action) -> str | None:
        if action.kind != CHOOSE_CONTRACT:
            return "it is time to choose the contract: S, H, D, C, NT or MT"
        contract = action.choice
        if contract not in CONTRACT_ACTIONS:
            return f"there is no contract {contract!r}: choose S, H, D, C, NT or MT"
        # Rule: each declarer plays each of the six contracts exactly once over the game.
        if contract in self.used[seat]:
            return f"you have already played {CONTRACT_NAMES[contract]}"
        return None

    def _why_give_illegal(self, seat: int, action: Action) -> str | None:
        debtor = self.exchange_queue[0][1]
        trump_name = SUIT_NAMES[self.trump]
        if action.kind != GIVE_CARD:
            return f"it is time to give seat {debtor} a card that is not {trump_name}"
        card = action.card
        if card not in self.hands[seat]:
            return f"you do not hold {format_card(card)}"
        # Rule: no trump card is ever exchanged.
        if SUIT_OF[card] == self.trump:
            return f"you may not give a trump: choose a card that is not {trump_name}"
        return None

    def _why_discard_illegal(self, seat: int, action: Action) -> str | None:
        if action.kind != DISCARD:
            return "it is time to put four cards away face down"
        cards = action.cards
        if len(cards) != TALON_SIZE or len(set(cards)) != TALON_SIZE:
            return "you must put away exactly four different cards"
        hand = self.hands[seat]
        missing = [card for card in cards if card not in hand]
        if missing:
            return f"you do not hold {format_card(missing[0])}"
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
        if suit == led:
            return None
        low, high = _suit_bounds(hand, led)
        # Rule: follow suit if possible (with no duty to beat).
        if low < high:
            return f"you must follow {SUIT_NAMES[led]}"
        # Rule (option "trump beat"): void in the suit led, play a trump if you hold one.
        trump = self.trump
        if trump >= 0 and suit != trump and self.options.trump_beat:
            low, high = _suit_bounds(hand, trump)
            if low < high:
                return f"you cannot follow {SUIT_NAMES[led]}, so you must play a trump"
        return None

    # -- applying --------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> list[Fact]:
        phase = self._phase
        if phase == PLAY_PHASE:
            return self._apply_play(seat, action.card)
        if phase == CONTRACT_PHASE:
            return self._apply_contract(seat, action.choice)
        if phase == EXCHANGE_PHASE:
            return self._apply_give(seat, action.card)
        return self._apply_discard(seat, action.cards)

    def _apply_contract(self, seat: int, contract: str) -> list[Fact]:
        self.contract = contract
        self.trump = TRUMP_OF[contract]
        self.used[seat].append(contract)
        facts: list[Fact] = [ContractChosen(seat, contract)]
        # Rule: once the contract is chosen all 16 cards are visible to their owners.
        for other in range(PLAYERS):
            first = self.first_cards[other]
            rest = tuple(card for card in self.hands[other] if card not in first)
            facts.append(CardsDealt(other, rest, (other,)))
        # Rule: the exchange follows a trump contract only, and never in the first deal.
        if self.trump >= 0 and self.deal_scores:
            self.exchange_queue = self._exchanges_owed(self.deal_scores[-1])
            facts.extend(
                ExchangesOwed(creditor, debtor, count)
                for creditor, debtor, count in self.exchange_queue
            )
        self._next_exchange(facts)
        return facts

    def _exchanges_owed(self, previous: tuple[int, ...]) -> list[tuple[int, int, int]]:
        """Who owes whom how many exchanges, from the previous deal's scores.

        Rule: creditors (score above 0) act in order of their target in this deal, highest
        first (declarer 8, third 5, dealer 3), and each settles with the debtors (below 0) in
        the same order; a pair makes min(c, d) exchanges and both counts go down by that.
        """
        order = (self.declarer, self.third, self.dealer)
        debts = [max(0, -score) for score in previous]
        owed: list[tuple[int, int, int]] = []
        for creditor in order:
            credit = previous[creditor]
            for debtor in order:
                count = min(credit, debts[debtor])
                if count > 0:
                    owed.append((creditor, debtor, count))
                    credit -= count
                    debts[debtor] -= count
        return owed

    def _next_exchange(self, facts: list[Fact]) -> None:
        """Hand the turn to the next creditor that can give, or move on to the talon."""
        queue = self.exchange_queue
        while queue:
            creditor = queue[0][0]
            if self._givable(self.hands[creditor]):
                self._phase = EXCHANGE_PHASE
                self.player = creditor
                return
            # Rule: a creditor with no card outside the trump suit skips the exchanges left.
            count = sum(left for seat, _, left in queue if seat == creditor)
            self.exchange_queue = queue = [entry for entry in queue if entry[0] != creditor]
            self.skipped.append((creditor, count))
            facts.append(ExchangesSkipped(creditor, count))
        self._take_talon(facts)

    def _apply_give(self, creditor: int, card: Card) -> list[Fact]:
        _, debtor, left = self.exchange_queue[0]
        creditor_hand = self.hands[creditor]
        debtor_hand = self.hands[debtor]
        creditor_hand.remove(card)
        insort(debtor_hand, card)
        # Rule: the debtor gives back the highest card they now hold in that suit, which is
        # the card just received if nothing of theirs beats it.
        high = _suit_bounds(debtor_hand, SUIT_OF[card])[1]
        returned = debtor_hand.pop(high - 1)
        insort(creditor_hand, returned)
        self.exchanges.append((creditor, debtor, card, returned))
        if left > 1:
            self.exchange_queue[0] = (creditor, debtor, left - 1)
        else:
            del self.exchange_queue[0]
        facts: list[Fact] = [CardsExchanged(creditor, debtor, card, returned, (creditor, debtor))]
        self._next_exchange(facts)
        return facts

    def _take_talon(self, facts: list[Fact]) -> None:
        declarer = self.declarer
        self._phase = DISCARD_PHASE
        self.player = declarer
        hand = self.hands[declarer]
        hand.extend(self.talon)
        hand.sort()
        facts.append(TalonTaken(declarer, tuple(sorted(self.talon)), (declarer,)))

    def _apply_discard(self, seat: int, cards: tuple[Card, ...]) -> list[Fact]:
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
        self.discarded = tuple(sorted(cards))
        # Rule: the declarer leads the first trick.
        self._phase = PLAY_PHASE
        self.leader = self.player = seat
        return [CardsDiscarded(seat, self.discarded, (seat,))]

    def _apply_play(self, seat: int, card: Card) -> list[Fact]:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append(card)
        played = CARD_PLAYED[seat][card]
        if len(trick) < PLAYERS:
            self.player = (seat + 1) % PLAYERS
            return [played]
        winner = trick_winner(trick, self.leader, self.trump, PLAYERS)
        self.tricks_won[winner] += 1
        cards = tuple(trick)
        self.tricks.append((self.leader, cards, winner))
        facts: list[Fact] = [played, TrickWon(len(self.tricks), self.leader, winner, cards)]
        self.trick = []
        self.leader = self.player = winner
        if len(self.tricks) == HAND_SIZE:
            facts.extend(self._score_deal())
        return facts

    def deal_score(self) -> tuple[int, ...]:
        """This deal's scores from the tricks taken."""
        return self.scores_for_tricks(self.tricks_won)

    def scores_for_tricks(self, tricks: Sequence[_Number]) -> tuple[_Number, ...]:
        """The deal's scores if each seat ends it with ``tricks``: the search values a playout
        it cuts short by tricks it estimates.

        Rule: trump and NT score tricks - target; MT scores limit - tricks. Targets and
        limits both sum to 16, the number of tricks, so the scores always sum to 0.
        """
        targets = self.targets()
        if self.contract == MINIMUM_TRICKS:
            return tuple(targets[seat] - tricks[seat] for seat in range(PLAYERS))
        return tuple(tricks[seat] - targets[seat] for seat in range(PLAYERS))

    def _score_deal(self) -> list[Fact]:
        scores = self.deal_score()
        totals = self._record_deal_scores(scores)
        facts: list[Fact] = [DealScored(self.deal_number, scores, totals)]
        if self.deal_number >= DEALS:
            self._phase = OVER_PHASE
            facts.append(self._end_game())
        else:
            self._phase = DEAL_PHASE
        return facts

    # -- results and views -----------------------------------------------------------------
    def progress(self) -> float:
        """Deals completed over the game's 18."""
        return len(self.deal_scores) / DEALS

    def _talon_taken(self) -> bool:
        return self._phase == DISCARD_PHASE or self._phase == PLAY_PHASE or bool(self.discarded)

    def _observation(self, seat: int | None) -> dict[str, Any]:
        own = seat is not None
        hand: list[Card] = []
        if seat is not None:
            # Rule: before the contract each seat sees only its first 6 cards.
            hand = (
                list(self.first_cards[seat]) if self._phase == CONTRACT_PHASE else self.hands[seat]
            )
        is_declarer = own and seat == self.declarer and self.deal_number > 0
        return {
            "hand": cards_json(hand),
            "hand_sizes": [len(cards) for cards in self.hands],
            "declarer": self.declarer if self.deal_number else None,
            "third": self.third if self.deal_number else None,
            "contract": self.contract,
            "trump": SUIT_LETTERS[self.trump] if self.trump >= 0 else "",
            "targets": list(self.targets()) if self.deal_number else [],
            "used_contracts": [list(contracts) for contracts in self.used],
            "talon_size": 0 if self._talon_taken() else len(self.talon),
            "talon": (
                cards_json(sorted(self.talon)) if is_declarer and self._talon_taken() else []
            ),
            "discarded": cards_json(self.discarded) if is_declarer else [],
            "exchanges_owed": [
                {"creditor": creditor, "debtor": debtor, "count": count}
                for creditor, debtor, count in self.exchange_queue
            ],
            "exchanges": [
                {
                    "creditor": creditor,
                    "debtor": debtor,
                    "given": format_card(given) if seat in (creditor, debtor) else None,
                    "returned": format_card(returned) if seat in (creditor, debtor) else None,
                }
                for creditor, debtor, given, returned in self.exchanges
            ],
            "exchanges_skipped": [
                {"creditor": creditor, "count": count} for creditor, count in self.skipped
            ],
            "trick": trick_json(self.leader, self.trick, PLAYERS),
            "leader": self.leader if self._phase == PLAY_PHASE else None,
            "tricks": tricks_json(self.tricks),
            "tricks_won": list(self.tricks_won),
        }

    def clone(self) -> ThreeFiveEightState:
        other = self._shallow_copy()
        other.hands = [list(hand) for hand in self.hands]
        other.first_cards = list(self.first_cards)
        other.used = [list(contracts) for contracts in self.used]
        other.exchange_queue = list(self.exchange_queue)
        other.exchanges = list(self.exchanges)
        other.skipped = list(self.skipped)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.tricks_won = list(self.tricks_won)
        return other

    # -- snapshots -------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        return {
            "phase": self._phase,
            "hands": [cards_json(hand) for hand in self.hands],
            "first_cards": [cards_json(cards) for cards in self.first_cards],
            "talon": cards_json(self.talon),
            "discarded": cards_json(self.discarded),
            "contract": self.contract,
            "used_contracts": [list(contracts) for contracts in self.used],
            "exchange_queue": [list(entry) for entry in self.exchange_queue],
            "exchanges": [
                {
                    "creditor": creditor,
                    "debtor": debtor,
                    "given": format_card(given),
                    "returned": format_card(returned),
                }
                for creditor, debtor, given, returned in self.exchanges
            ],
            "skipped": [list(entry) for entry in self.skipped],
            "trick": cards_json(self.trick),
            "leader": self.leader,
            "player": self.player,
            "tricks": tricks_json(self.tricks),
            "tricks_won": list(self.tricks_won),
        }

    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        self._phase = read_phase(data, "phase", Phase)
        if (self._phase == OVER_PHASE) != self.over:
            raise inconsistent("the phase and the end of the game disagree")
        last = PLAYERS - 1
        self._load_hidden_places(data)
        self.contract = read_str(data, "contract", ("", *CONTRACTS))
        self.trump = TRUMP_OF.get(self.contract, -1)
        used_data = read_list(data, "used_contracts", PLAYERS)
        if len(used_data) != PLAYERS:
            raise inconsistent("contracts used are kept per seat")
        self.used = []
        for contracts in used_data:
            if not isinstance(contracts, list) or len(contracts) > len(CONTRACTS):
                raise inconsistent("each seat plays at most six contracts")
            if any(contract not in CONTRACTS for contract in contracts):
                raise inconsistent("a contract used is not S, H, D, C, NT or MT")
            if len(set(contracts)) != len(contracts):
                raise inconsistent("a seat played the same contract twice")
            self.used.append(list(contracts))
        queue_data = read_list(data, "exchange_queue", PLAYERS * PLAYERS)
        self.exchange_queue = []
        for entry in queue_data:
            creditor, debtor, count = ints_from_json(entry, "exchange_queue", 3, 0, HAND_SIZE)
            if creditor > last or debtor > last or creditor == debtor or count < 1:
                raise inconsistent("an exchange owed names bad seats or no exchanges")
            self.exchange_queue.append((creditor, debtor, count))
        exchanges_data = read_list(data, "exchanges", HAND_SIZE * PLAYERS)
        self.exchanges = []
        for exchange in exchanges_data:
            creditor = read_int(exchange, "creditor", 0, last)
            debtor = read_int(exchange, "debtor", 0, last)
            given = cards_from_json([require(exchange, "given")], "given", 1)[0]
            returned = cards_from_json([require(exchange, "returned")], "returned", 1)[0]
            if creditor == debtor or SUIT_OF[given] != SUIT_OF[returned]:
                raise inconsistent("an exchange must be between two seats in one suit")
            self.exchanges.append((creditor, debtor, given, returned))
        skipped_data = read_list(data, "skipped", PLAYERS)
        self.skipped = []
        for entry in skipped_data:
            creditor, count = ints_from_json(entry, "skipped", 2, 0, HAND_SIZE)
            if creditor > last:
                raise inconsistent("a skipped exchange names a bad seat")
            self.skipped.append((creditor, count))
        self.trick = read_cards(data, "trick", PLAYERS - 1)
        self.leader = read_int(data, "leader", 0, last)
        self.player = read_int(data, "player", 0, last)
        tricks_data = read_list(data, "tricks", HAND_SIZE)
        self.tricks = []
        for trick in tricks_data:
            leader = read_int(trick, "leader", 0, last)
            cards = tuple(cards_from_json(require(trick, "cards"), "tricks", PLAYERS))
            winner = read_int(trick, "winner", 0, last)
            if len(cards) != PLAYERS:
                raise inconsistent("a finished trick holds three cards")
            self.tricks.append((leader, cards, winner))
        self.tricks_won = read_int_list(data, "tricks_won", PLAYERS, 0, HAND_SIZE)
        self._check_invariants()

    def _load_hidden_places(self, data: Mapping[str, Any]) -> bool:
        """The hands (and the first cards dealt of each), the talon and the cards put away:
        what a seat may not see."""
        hands_data = read_list(data, "hands", PLAYERS)
        first_data = read_list(data, "first_cards", PLAYERS)
        if len(hands_data) != PLAYERS or len(first_data) != PLAYERS:
            raise inconsistent("3-5-8 keeps three hands")
        self.hands = [
            sorted(cards_from_json(hand, "hands", HAND_SIZE + TALON_SIZE)) for hand in hands_data
        ]
        self.first_cards = [
            tuple(sorted(cards_from_json(cards, "first_cards", FIRST_CARDS)))
            for cards in first_data
        ]
        self.talon = tuple(read_cards(data, "talon", TALON_SIZE))
        self.discarded = tuple(sorted(read_cards(data, "discarded", TALON_SIZE)))
        return True

    def _check_invariants(self) -> None:
        """The checks that make a loaded snapshot a state the rules could have reached."""
        self._check_history()
        phase = self._phase
        if phase in (DEAL_PHASE, OVER_PHASE):
            if any(self.hands) or self.trick or self.exchange_queue:
                raise inconsistent("between deals no cards are held and no exchange is owed")
            return
        hands = self.hands
        declarer = self.declarer
        played = [card for _, cards, _ in self.tricks for card in cards]
        if phase in (CONTRACT_PHASE, EXCHANGE_PHASE):
            check_each_card_once([*hands, self.talon], FULL_DECK)
        else:
            if len(self.talon) != TALON_SIZE or not set(self.talon) <= set(
                [*hands[declarer], *self.discarded, *played, *self.trick]
            ):
                raise inconsistent("the talon is not with the declarer")
            check_each_card_once([*hands, self.discarded, played, self.trick], FULL_DECK)
        if phase != PLAY_PHASE and (self.trick or self.tricks or any(self.tricks_won)):
            raise inconsistent("no card is played before the talon is put away")
        if phase != CONTRACT_PHASE and self.contract not in self.used[declarer]:
            raise inconsistent("the declarer's contract is not among those they played")
        if phase == CONTRACT_PHASE:
            self._check_contract_phase()
        elif phase == EXCHANGE_PHASE:
            self._check_exchange_phase()
        elif phase == DISCARD_PHASE:
            if self.player != declarer or self.discarded or self.exchange_queue:
                raise inconsistent("the declarer puts four cards away after the exchange")
            sizes = [
                HAND_SIZE + TALON_SIZE if seat == declarer else HAND_SIZE for seat in range(PLAYERS)
            ]
            if [len(hand) for hand in hands] != sizes:
                raise inconsistent("the declarer holds the talon in the discard phase")
        else:
            self._check_play_phase(played)

    def _check_history(self) -> None:
        """Deal count, dealer and contracts used agree with each other."""
        if self.deal_number > DEALS:
            raise inconsistent("3-5-8 has 18 deals")
        # Rule: the deal passes to the left after each deal.
        if self.dealer != (self.first_dealer + max(0, self.deal_number - 1)) % PLAYERS:
            raise inconsistent("the dealer does not match the deal number")
        scored = (
            self.deal_number if self._phase in (DEAL_PHASE, OVER_PHASE) else self.deal_number - 1
        )
        if len(self.deal_scores) != max(0, scored):
            raise inconsistent("the deal scores do not match the deal number")
        if any(sum(scores) != 0 for scores in self.deal_scores):
            raise inconsistent("the scores of a deal always sum to 0")
        if self.over != (len(self.deal_scores) == DEALS):
            raise inconsistent("the game ends after 18 deals")
        chosen = self.deal_number - 1 if self._phase == CONTRACT_PHASE else self.deal_number
        declared = [0] * PLAYERS
        for deal in range(1, chosen + 1):
            declared[(self.first_dealer + deal) % PLAYERS] += 1
        if [len(contracts) for contracts in self.used] != declared:
            raise inconsistent("the contracts used do not match the deals declared")

    def _check_contract_phase(self) -> None:
        if self.contract or self.exchange_queue or self.exchanges or self.skipped:
            raise inconsistent("nothing happens before the contract is chosen")
        if self.discarded or self.player != self.declarer:
            raise inconsistent("the declarer chooses the contract first")
        for seat in range(PLAYERS):
            if len(self.hands[seat]) != HAND_SIZE or len(self.first_cards[seat]) != FIRST_CARDS:
                raise inconsistent("each seat holds 16 cards and sees 6 of them")
            if not set(self.first_cards[seat]) <= set(self.hands[seat]):
                raise inconsistent("a seat's first cards are not in its hand")

    def _check_exchange_phase(self) -> None:
        if self.trump < 0 or not self.deal_scores or not self.exchange_queue:
            raise inconsistent("an exchange takes place only after a trump contract")
        if self.discarded or any(len(hand) != HAND_SIZE for hand in self.hands):
            raise inconsistent("the exchange comes before the talon")
        previous = self.deal_scores[-1]
        for creditor, debtor, _ in self.exchange_queue:
            if previous[creditor] <= 0 or previous[debtor] >= 0:
                raise inconsistent("an exchange owed does not follow the previous scores")
        if self.player != self.exchange_queue[0][0]:
            raise inconsistent("the creditor first in line must act")
        if not self._givable(self.hands[self.player]):
            raise inconsistent("a creditor holding only trumps cannot be asked to give")

    def _check_play_phase(self, played: list[Card]) -> None:
        if len(self.discarded) != TALON_SIZE:
            raise inconsistent("the declarer puts four cards away before the play")
        if self.exchange_queue:
            raise inconsistent("the exchange is over before the play")
        if self.player != (self.leader + len(self.trick)) % PLAYERS:
            raise inconsistent("the player to act does not follow the leader")
        sizes = {
            len(hand) + (1 if (seat - self.leader) % PLAYERS < len(self.trick) else 0)
            for seat, hand in enumerate(self.hands)
        }
        if sizes != {HAND_SIZE - len(self.tricks)}:
            raise inconsistent("the hands do not match the tricks played")
        won = [0] * PLAYERS
        leader = self.declarer
        for trick_leader, cards, winner in self.tricks:
            if trick_leader != leader:
                raise inconsistent("a trick was led by someone other than the last winner")
            if winner != trick_winner(cards, leader, self.trump, PLAYERS):
                raise inconsistent("a trick's winner is not the highest card")
            won[winner] += 1
            leader = winner
        if won != self.tricks_won or leader != self.leader:
            raise inconsistent("the tricks won do not match the tricks played")


THREE_FIVE_EIGHT = GameSpec(
    name="358",
    title="3-5-8",
    min_players=PLAYERS,
    max_players=PLAYERS,
    options_type=ThreeFiveEightOptions,
    state_type=ThreeFiveEightState,
)
ThreeFiveEightState.spec = THREE_FIVE_EIGHT
