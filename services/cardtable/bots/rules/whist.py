"""Rule-based Whist: bid the tricks the hand should take, then play to take exactly that many."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from cardtable.bots.rules.common import (
    ABOVE,
    FinishedTricks,
    is_master,
    play_for_tricks,
    played_cards,
)
from cardtable.engine.actions import BIDS, PLAY, Action
from cardtable.engine.cards import RANK_OF, SUIT_OF, Card
from cardtable.engine.games.whist.rules import (
    BID_PHASE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    WHIST,
    WhistState,
    whist_deck,
)

#: Chance that a plain card which is the highest of its suit still out wins its trick: it may
#: be trumped, more often the more cards there are in the deal.
PLAIN_WIN = 0.9


def expected_tricks(hand: list[Card], trump: int, players: int) -> float:
    """Roughly how many tricks ``hand`` takes: each card's chance of winning, summed.

    A card wins when no other seat holds a higher card of its suit (or that card is not
    dealt): each higher card is in another hand with probability ``q``, the share of the deck
    the other seats hold. A plain card may also be trumped, and long suits give out before
    their low cards are led.
    """
    cards_each = len(hand)
    deck = len(whist_deck(players))
    q = (players - 1) * cards_each / max(deck - cards_each, 1)
    # Counted once, top down: the hand's own cards above each card, and each suit's length.
    higher_held: dict[Card, int] = {}
    lengths = [0, 0, 0, 0]
    for card in sorted(hand, reverse=True):
        higher_held[card] = lengths[SUIT_OF[card]]
        lengths[SUIT_OF[card]] += 1
    total = 0.0
    for card in hand:
        suit = SUIT_OF[card]
        above = 12 - RANK_OF[card] - higher_held[card]
        chance = (1 - q) ** above
        if suit != trump:
            length = lengths[suit]
            chance *= PLAIN_WIN if trump >= 0 else 1.0
            chance *= 0.85 ** max(length - 3, 0)
        total += chance
    return total


#: ``(slope, intercept)`` by hand size: the tricks rule-based players really take, as a line
#: in :func:`expected_tricks` (which overrates small hands: a plain card wins only if its suit
#: is led; and underrates big ones: long suits win late). Least squares over 160 games of 3 to
#: 6 players, by :func:`measure_calibration`.
CALIBRATION: dict[int, tuple[float, float]] = {
    1: (0.650, -0.18),
    2: (0.568, -0.05),
    3: (0.571, 0.095),
    4: (0.602, 0.284),
    5: (0.725, 0.36),
    6: (0.958, 0.36),
    7: (1.027, 0.513),
    8: (1.131, 0.535),
}


def measure_calibration(games: int, rng: random.Random) -> dict[int, tuple[float, float]]:
    """Fit :data:`CALIBRATION` again: rule-based players, tricks taken against the estimate."""
    from cardtable.bots.random_play import shuffled_deck
    from cardtable.bots.rules import rules_action

    samples: dict[int, tuple[list[float], list[float]]] = {}
    for game in range(games):
        players = MIN_PLAYERS + game % (MAX_PLAYERS - MIN_PLAYERS + 1)
        state = WHIST.new_game(players, None, 0)
        assert isinstance(state, WhistState)
        while not state.is_over():
            state.deal(shuffled_deck(state, rng))
            estimates = [expected_tricks(hand, state.trump, players) for hand in state.hands]
            cards_each = state.cards_each
            deals = len(state.deal_scores)
            while len(state.deal_scores) == deals:
                seat = state.to_act()[0]
                state.apply(seat, rules_action(state, seat))
            xs, ys = samples.setdefault(cards_each, ([], []))
            xs.extend(estimates)
            ys.extend(float(won) for won in state.tricks_won)
    fits = {size: statistics.linear_regression(xs, ys) for size, (xs, ys) in samples.items()}
    return {size: (fit.slope, fit.intercept) for size, fit in sorted(fits.items())}


def choose_bid(state: WhistState, seat: int) -> Action:
    slope, intercept = CALIBRATION[state.cards_each]
    raw = expected_tricks(state.hands[seat], state.trump, state.num_players)
    estimate = slope * raw + intercept
    allowed = [action.number for action in state.legal_actions(seat)]
    return BIDS[min(allowed, key=lambda tricks: (abs(tricks - estimate), tricks))]


def choose_play(state: WhistState, seat: int) -> Action:
    hand = state.hands[seat]
    legal = [action.card for action in state.legal_actions(seat)]
    won = state.tricks_won[seat]
    return PLAY[_card(state, seat, hand, legal, state.trick, state.tricks, won)]


def card_then(
    state: WhistState,
    seat: int,
    hand: list[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    tricks: FinishedTricks,
) -> Card:
    """The card :func:`choose_play` would have played earlier in the deal: with ``hand``, on
    ``trick``, after the finished ``tricks``. Reading the others' plays weighs worlds by it."""
    won = sum(1 for _, _, winner in tricks if winner == seat)
    return _card(state, seat, hand, legal, trick, tricks, won)


def _card(
    state: WhistState,
    seat: int,
    hand: list[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    tricks: FinishedTricks,
    won: int,
) -> Card:
    """Play for tricks while the seat has ``won`` fewer than it bid, else to lose them."""
    want = won < (state.bids[seat] or 0)
    return play_for_tricks(hand, legal, trick, state.trump, state.num_players, want, tricks)


def act(state: WhistState, seat: int) -> Action:
    if state.phase == BID_PHASE:
        return choose_bid(state, seat)
    return choose_play(state, seat)


def sure_tricks(hand: Sequence[Card], known: set[Card], trump: int) -> int:
    """The masters of trump in ``hand``: each wins a trick whatever the others hold, if kept
    to the end. A plain master is not sure: its suit may never be led while the seat is off
    lead, and it is then thrown away."""
    return sum(1 for card in hand if SUIT_OF[card] == trump and is_master(card, known))


def act_keen(state: WhistState, seat: int) -> Action:
    """:func:`act` with two habits of stronger players, for the hard level's playouts.
    Counting sure tricks: a seat that still needs tricks but holds masters of trump enough for
    them loses the tricks it could take with other cards, as each would be one too many.
    Leading to lose: a seat that wants no more tricks leads the plain card most likely to be
    beaten, the one with the most higher cards of its suit still out, not simply its lowest."""
    if state.phase == BID_PHASE:
        return choose_bid(state, seat)
    hand = state.hands[seat]
    legal = [action.card for action in state.legal_actions(seat)]
    trick, tricks, trump = state.trick, state.tricks, state.trump
    need = (state.bids[seat] or 0) - state.tricks_won[seat]
    want = need > 0
    if len(legal) > 1:
        if want and trick:
            want = sure_tricks(hand, played_cards(tricks, hand), trump) < need
        elif not want and not trick:
            return PLAY[likeliest_to_lose(legal, played_cards(tricks, hand), trump)]
    return PLAY[play_for_tricks(hand, legal, trick, trump, state.num_players, want, tricks)]


def likeliest_to_lose(legal: Sequence[Card], known: set[Card], trump: int) -> Card:
    """The lead least likely to win its trick: a plain card before a trump, then the one with
    the most higher cards of its suit not ``known``, then the lowest. The deck holds every
    rank above its lowest, so the cards above a card are all in it."""

    def higher_out(card: Card) -> int:
        return sum(1 for higher in ABOVE[card] if higher not in known)

    return max(legal, key=lambda card: (SUIT_OF[card] != trump, higher_out(card), -RANK_OF[card]))
