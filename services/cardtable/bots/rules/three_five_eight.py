"""Rule-based 3-5-8: choose the contract the first six cards suit best among those left, give
low cards in the exchange, put away what will not take tricks, then take every trick it can
(or, in minimum tricks, as few as it can). :func:`discard_alternatives` offers a search
discards of other kinds than the rule's.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from cardtable.bots.rules.common import NO_TRUMP as NO_TRUMP_SUIT
from cardtable.bots.rules.common import FinishedTricks, play_for_tricks
from cardtable.engine.actions import GIVE, PLAY, Action, discard
from cardtable.engine.cards import ACE, FULL_DECK, KING, QUEEN, RANK_OF, SUIT_OF, SUITS, Card
from cardtable.engine.games.three_five_eight.rules import (
    CONTRACT_ACTIONS,
    CONTRACT_PHASE,
    CONTRACTS,
    DISCARD_PHASE,
    EXCHANGE_PHASE,
    FIRST_CARDS,
    MINIMUM_TRICKS,
    NO_TRUMP,
    PLAYERS,
    TALON_SIZE,
    TRUMP_OF,
    ThreeFiveEightState,
)

#: Mean and spread of each kind of contract's fitness over random six-card hands, so that the
#: contracts compare on one scale: the hand is measured against what that contract usually
#: gets. :func:`measure_fitness_scale` measured them on 20,000 random hands (a test checks).
FITNESS_SCALE = {"trump": (3.07, 1.70), NO_TRUMP: (0.88, 0.69), MINIMUM_TRICKS: (0.46, 1.54)}


def contract_fitness(cards: list[Card], contract: str) -> float:
    """How well six cards suit a contract, before the scale: trumps and honours for a trump
    contract, aces and kings for no trump, low cards and no honours for minimum tricks."""
    if contract == MINIMUM_TRICKS:
        return sum(max(0.0, (7 - RANK_OF[card]) / 7) for card in cards) - sum(
            1.0 for card in cards if RANK_OF[card] >= QUEEN
        )
    honours = {ACE: 1.0, KING: 0.6, QUEEN: 0.3}
    if contract == NO_TRUMP:
        return sum(honours.get(RANK_OF[card], 0.0) for card in cards)
    trump = TRUMP_OF[contract]
    score = 0.0
    for card in cards:
        if SUIT_OF[card] == trump:
            score += 1.2 + RANK_OF[card] / 12
        else:
            score += honours.get(RANK_OF[card], 0.0) * 0.8
    return score


#: ``CARD_FITNESS[contract][card]``: one card's :func:`contract_fitness`, which is a sum over
#: the cards; reading a declarer's contract on a sampled hand weighs every card for six of them.
CARD_FITNESS: dict[str, tuple[float, ...]] = {
    contract: tuple(contract_fitness([card], contract) for card in range(len(FULL_DECK)))
    for contract in CONTRACTS
}


def measure_fitness_scale(hands: int, rng: random.Random) -> dict[str, tuple[float, float]]:
    """The mean and standard deviation of each kind of contract's fitness over random hands."""
    samples: dict[str, list[float]] = {"trump": [], NO_TRUMP: [], MINIMUM_TRICKS: []}
    for _ in range(hands):
        cards = rng.sample(FULL_DECK, FIRST_CARDS)
        samples["trump"].append(contract_fitness(cards, rng.choice("SHDC")))
        samples[NO_TRUMP].append(contract_fitness(cards, NO_TRUMP))
        samples[MINIMUM_TRICKS].append(contract_fitness(cards, MINIMUM_TRICKS))
    return {
        kind: (statistics.fmean(values), statistics.stdev(values))
        for kind, values in samples.items()
    }


def fitness_scale(contract: str) -> tuple[float, float]:
    """The mean and spread of ``contract``'s fitness over random six-card hands."""
    return FITNESS_SCALE[contract if contract in (NO_TRUMP, MINIMUM_TRICKS) else "trump"]


def scaled_fitness(cards: list[Card], contract: str) -> float:
    mean, spread = fitness_scale(contract)
    return (contract_fitness(cards, contract) - mean) / spread


def choose_contract(state: ThreeFiveEightState, seat: int) -> Action:
    cards = list(state.first_cards[seat])
    left = [action.choice for action in state.legal_actions(seat)]
    best = max(left, key=lambda contract: scaled_fitness(cards, contract))
    return CONTRACT_ACTIONS[best]


def choose_give(state: ThreeFiveEightState, seat: int) -> Action:
    """The lowest card outside trumps: the debtor must give back its highest of that suit."""
    legal = [action.card for action in state.legal_actions(seat)]
    return GIVE[min(legal, key=lambda card: (RANK_OF[card], _suit_length(state.hands[seat], card)))]


def _suit_length(hand: list[Card], card: Card) -> int:
    return sum(1 for other in hand if SUIT_OF[other] == SUIT_OF[card])


def choose_discard(state: ThreeFiveEightState, seat: int) -> Action:
    """In minimum tricks put away the highest cards; otherwise the low cards of the shortest
    plain suits (a void lets trumps take tricks), never trumps or aces."""
    return discard(_by_discard_order(state, seat)[:TALON_SIZE])


def _by_discard_order(state: ThreeFiveEightState, seat: int) -> list[Card]:
    """The declarer's cards, the first to put away first (:func:`choose_discard`)."""
    hand = state.hands[seat]
    trump = state.trump
    if state.contract == MINIMUM_TRICKS:
        return sorted(hand, key=lambda card: RANK_OF[card], reverse=True)
    lengths = {suit: sum(1 for card in hand if SUIT_OF[card] == suit) for suit in SUITS}

    def keep(card: Card) -> float:
        rank = RANK_OF[card]
        if SUIT_OF[card] == trump:
            return 100.0 + rank
        value = rank * 2.0 + lengths[SUIT_OF[card]]
        if trump >= 0:
            value += lengths[SUIT_OF[card]] * 1.5
        return value

    return sorted(hand, key=keep)


def discard_alternatives(state: ThreeFiveEightState, seat: int) -> list[Action]:
    """Discards of other kinds than :func:`choose_discard`'s, for a search to weigh beside it:
    every plain suit, or pair of plain suits, of four cards or fewer put away whole (a void
    ruffs in a trump contract and sheds high cards in minimum tricks), topped up in the
    rule's order; and, but in minimum tricks, the four lowest plain cards whatever their suits.
    Swapping one card of the rule's discard never empties a suit the rule keeps."""
    order = _by_discard_order(state, seat)
    plain = [suit for suit in SUITS if suit != state.trump]
    by_suit = {suit: [card for card in order if SUIT_OF[card] == suit] for suit in plain}
    emptied: list[list[Card]] = [
        by_suit[suit] for suit in plain if 1 <= len(by_suit[suit]) <= TALON_SIZE
    ]
    emptied += [
        by_suit[first] + by_suit[second]
        for index, first in enumerate(plain)
        for second in plain[index + 1 :]
        if by_suit[first]
        and by_suit[second]
        and len(by_suit[first]) + len(by_suit[second]) <= TALON_SIZE
    ]
    found = [cards + [card for card in order if card not in cards] for cards in emptied]
    if state.contract != MINIMUM_TRICKS:
        found.append(sorted(order, key=lambda card: (SUIT_OF[card] == state.trump, RANK_OF[card])))
    rule = discard(order[:TALON_SIZE])
    unique: list[Action] = []
    for cards in found:
        action = discard(cards[:TALON_SIZE])
        if action != rule and action not in unique:
            unique.append(action)
    return unique


def choose_play(state: ThreeFiveEightState, seat: int) -> Action:
    hand = state.hands[seat]
    legal = state.playable(seat)
    return PLAY[card_then(state, seat, hand, legal, state.trick, state.tricks)]


def card_then(
    state: ThreeFiveEightState,
    seat: int,
    hand: list[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    tricks: FinishedTricks,
) -> Card:
    """The card the player of ``seat`` plays with ``hand`` on ``trick`` after the finished
    ``tricks``: now (:func:`choose_play`), or earlier in the deal, to weigh worlds by it."""
    want = state.contract != MINIMUM_TRICKS
    trump = state.trump if state.trump >= 0 else NO_TRUMP_SUIT
    return play_for_tricks(hand, legal, trick, trump, PLAYERS, want, tricks)


def act(state: ThreeFiveEightState, seat: int) -> Action:
    phase = state.phase
    if phase == CONTRACT_PHASE:
        return choose_contract(state, seat)
    if phase == EXCHANGE_PHASE:
        return choose_give(state, seat)
    if phase == DISCARD_PHASE:
        return choose_discard(state, seat)
    return choose_play(state, seat)
