"""A seat's work bank: what a clear move leaves of its budget, a close move may spend.

With a fixed budget per move, the search spends as much on an obvious move as on the move
that decides the deal. The racing search (:mod:`cardtable.bots.racing`) stops as soon as one
candidate is left, and the bank keeps what it did not spend for the seat's later moves. A move
may spend the budget plus what is banked, up to :data:`MOST_BUDGETS_A_MOVE` budgets, so that
over a seat's decisions the work is at most the budget a move on average (a move may overrun by
the one world it was evaluating, which the bank then owes) and no move takes more than a few
budgets of a turn's time. The bank holds more than one move may spend
(:data:`MOST_BUDGETS_BANKED`): a run of clear moves would otherwise fill it and lose the rest,
and the seat would spend less than its budget. Moves with one legal action are not decisions
and neither spend nor bank.

The bank lives as long as its strategy: one table's game in the bot service, one board in the
tournament. Both play a seat's moves in order, so the same moves give the same bank.

>>> bank = WorkBank(100)
>>> bank.allowance(0)
100
>>> bank.settle(0, spent=20)
>>> bank.allowance(0), bank.allowance(1)
(180, 100)
>>> bank.settle(0, spent=180)
>>> bank.allowance(0)
100
>>> for _ in range(10): bank.settle(0, spent=0)
>>> bank.allowance(0), bank.settle(0, spent=400), bank.allowance(0)
(400, None, 400)
"""

from __future__ import annotations

import threading

#: The most a single move may spend, in budgets: bounds a move's wall time under the turn timer.
MOST_BUDGETS_A_MOVE = 4
#: The most a seat may have banked, in budgets: about the clear moves of a deal, so what they
#: leave reaches the deal's close moves.
MOST_BUDGETS_BANKED = 8


class WorkBank:
    """Work units each seat has not spent of its moves' budgets, capped."""

    def __init__(
        self,
        budget: int,
        most_budgets: int = MOST_BUDGETS_A_MOVE,
        most_banked_budgets: int = MOST_BUDGETS_BANKED,
    ) -> None:
        self.budget = budget
        self.most_a_move = budget * most_budgets
        self.most_banked = budget * most_banked_budgets
        self._banked: dict[int, int] = {}
        # Hearts' passes are chosen by several seats at once, in threads of the bot service.
        self._lock = threading.Lock()

    def allowance(self, seat: int) -> int:
        """The most ``seat`` may spend on its move now."""
        with self._lock:
            return min(self.budget + self._banked.get(seat, 0), self.most_a_move)

    def settle(self, seat: int, spent: int) -> None:
        """Record that ``seat``'s move spent ``spent`` units of its allowance."""
        with self._lock:
            left = self.budget + self._banked.get(seat, 0) - spent
            # A debt beyond one budget would only come of budgets smaller than one world.
            self._banked[seat] = max(-self.budget, min(left, self.most_banked))
