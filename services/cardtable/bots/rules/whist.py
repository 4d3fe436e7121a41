"""Rule-based Whist: bid the tricks the hand should take, then play to take exactly that many."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from cardtable.bots.rules.common import (
    ABOVE,
    FinishedTricks,
    beats,
    is_master,
    play_for_tricks,
    played_cards,
)
from cardtable.engine.actions import BIDS, PLAY, Action
from cardtable.engine.cards import RANK_OF, SUIT_OF, Card, trick_winner
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
    legal = state.playable(seat)
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
    return PLAY[keen_card(state, seat, state.playable(seat))]


def keen_card(state: WhistState, seat: int, legal: Sequence[Card]) -> Card:
    """:func:`act_keen`'s card, from the ``legal`` ones."""
    hand = state.hands[seat]
    trick, tricks, trump = state.trick, state.tricks, state.trump
    need = (state.bids[seat] or 0) - state.tricks_won[seat]
    want = need > 0
    if len(legal) > 1:
        if want and trick:
            want = sure_tricks(hand, played_cards(tricks, hand), trump) < need
        elif not want and not trick:
            return likeliest_to_lose(legal, played_cards(tricks, hand), trump)
    return play_for_tricks(hand, legal, trick, trump, state.num_players, want, tricks)


def likeliest_to_lose(legal: Sequence[Card], known: set[Card], trump: int) -> Card:
    """The lead least likely to win its trick: a plain card before a trump, then the one with
    the most higher cards of its suit not ``known``, then the lowest. The deck holds every
    rank above its lowest, so the cards above a card are all in it."""

    def higher_out(card: Card) -> int:
        return sum(1 for higher in ABOVE[card] if higher not in known)

    return max(legal, key=lambda card: (SUIT_OF[card] != trump, higher_out(card), -RANK_OF[card]))


def act_pushing(state: WhistState, seat: int) -> Action:
    """:func:`act_keen` with the habits of searching players toward a seat that has its bid,
    for the ``push`` playout. Such a player plays for its lead over the others' mean, so one
    more trick for a seat that has made its bid (which costs that seat its whole bonus) is
    worth more to it than a trick of its own: without these habits the playouts foresee a low
    bid made more often than it is. :func:`forcing_lead` reads every hand, so this is for
    playouts on a sampled world only, never a player's choice."""
    if state.phase == BID_PHASE:
        return choose_bid(state, seat)
    legal = state.playable(seat)
    if len(legal) > 1:
        if not state.trick:
            card = forcing_lead(state, seat, legal)
        elif has_its_bid(state, seat):
            card = None  # it is already ducking what it can
        else:
            card = leave_it(state, legal)
        if card is not None:
            return PLAY[card]
    return PLAY[keen_card(state, seat, legal)]


def has_its_bid(state: WhistState, seat: int) -> bool:
    return state.tricks_won[seat] >= (state.bids[seat] or 0)


def leave_it(state: WhistState, legal: Sequence[Card]) -> Card | None:
    """For a seat that still needs tricks, following a trick that a seat which has its bid is
    winning: the highest card that leaves the trick to it, plain before trump. None
    when the trick is won by a seat still short of its bid, or every card would take it."""
    trick, trump, leader, players = state.trick, state.trump, state.leader, state.num_players
    winner = trick_winner(trick, leader, trump, players)
    if not has_its_bid(state, winner):
        return None
    best = trick[(winner - leader) % players]
    losers = [card for card in legal if not beats(card, best, trump)]
    if not losers:
        return None
    return max(losers, key=lambda card: (SUIT_OF[card] != trump, RANK_OF[card]))


def forcing_lead(state: WhistState, seat: int, legal: Sequence[Card]) -> Card | None:
    """A plain card that leaves a seat which has its bid no choice but to take the trick: it
    holds cards of the suit, all above every other card of it out, and no other seat can trump
    it. The highest such card, to shed it. Only for a leader whose masters cover the tricks it
    still needs. Reads the other seats' hands."""
    players, trump = state.num_players, state.trump
    targets = [other for other in range(players) if other != seat and has_its_bid(state, other)]
    if not targets:
        return None
    hand = state.hands[seat]
    need = (state.bids[seat] or 0) - state.tricks_won[seat]
    if need > 0:
        known = played_cards(state.tricks, hand)
        if sum(1 for card in hand if is_master(card, known)) < need:
            return None
    # Each other seat's lowest and highest card of each suit, -1 for none.
    lowest_of = [[-1] * 4 for _ in range(players)]
    highest_of = [[-1] * 4 for _ in range(players)]
    for other in range(players):
        if other == seat:
            continue
        low, high = lowest_of[other], highest_of[other]
        for card in state.hands[other]:
            suit = SUIT_OF[card]
            if low[suit] < 0 or card < low[suit]:
                low[suit] = card
            high[suit] = max(high[suit], card)
    chosen: Card | None = None
    for target in targets:
        for suit in range(4):
            floor = lowest_of[target][suit]
            if suit == trump or floor < 0:
                continue
            under = [card for card in legal if SUIT_OF[card] == suit and card < floor]
            if not under:
                continue
            lead = max(under)
            if chosen is not None and _lead_rank(lead) <= _lead_rank(chosen):
                continue
            others = (highest_of[other] for other in range(players) if other not in (seat, target))
            if all(_stays_under(highest, suit, floor, trump) for highest in others):
                chosen = lead
    return chosen


def _stays_under(highest: Sequence[Card], suit: int, floor: Card, trump: int) -> bool:
    """Whether a seat whose highest card of each suit is ``highest`` (-1 for none) can neither
    follow ``suit`` above ``floor`` nor trump it."""
    if highest[suit] >= 0:
        return highest[suit] < floor
    return trump < 0 or highest[trump] < 0


def _lead_rank(card: Card) -> tuple[int, Card]:
    return RANK_OF[card], card
