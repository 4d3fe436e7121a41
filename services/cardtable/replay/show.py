"""Printing a replay: the whole game at once, or trick by trick with a pause after each.

``pause`` is how the replay asks the person what next; it gets a prompt and returns their
answer: Enter or ``n`` for the next trick, ``d`` to run on to the end of the deal, ``q`` to stop.
Without it the whole game (or the one deal asked for) is printed straight through, which is what
happens when the output is not a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.console import Console, RenderableType

from cardtable.engine.record import GameRecord
from cardtable.replay.render import GameRenderer
from cardtable.replay.session import OPEN_ONLY_WHEN_OVER, Viewpoint, replay_steps

Pause = Callable[[str], str]

NEXT_TRICK = "n"
NEXT_DEAL = "d"
QUIT = "q"
TRICK_PROMPT = "[Enter/n] next trick · [d] next deal · [q] quit "
DEAL_PROMPT = "[Enter] next deal · [q] quit "


def show_replay(
    record: GameRecord,
    viewpoint: Viewpoint,
    console: Console,
    *,
    deal: int | None = None,
    pause: Pause | None = None,
) -> None:
    """Print ``record`` from ``viewpoint``; only its ``deal``-th deal (from 1) when given.

    Raises :class:`~cardtable.replay.session.ReplayError` after printing everything before
    the first input the engine refuses.
    """
    problem = replay_request_problem(record, viewpoint, deal)
    if problem:
        raise ValueError(problem)
    renderer = GameRenderer(record, viewpoint)
    _print(console, renderer.intro())
    to_deal_end = False
    for step in replay_steps(record, viewpoint):
        if deal is not None and step.deal_index + 1 < deal:
            continue
        if deal is not None and step.deal_index + 1 > deal:
            break
        _print(console, renderer.render(step))
        if pause is None:
            continue
        last = step.game_ended is not None or (deal is not None and step.deal_scored is not None)
        if last:
            break
        if step.deal_scored is not None:
            to_deal_end = False
            answer = _ask(console, renderer, pause, DEAL_PROMPT)
        elif step.trick is not None and not to_deal_end:
            answer = _ask(console, renderer, pause, TRICK_PROMPT)
        else:
            continue
        if answer == QUIT:
            return
        to_deal_end = answer == NEXT_DEAL
    _print(console, renderer.close())


def replay_request_problem(
    record: GameRecord, viewpoint: Viewpoint, deal: int | None
) -> str | None:
    """Why the seat or deal asked for does not exist in ``record``, or why its viewpoint may
    not see it (every hand open, of a game not over), or ``None``."""
    if viewpoint.open and not record.result.get("over"):
        return OPEN_ONLY_WHEN_OVER
    if viewpoint.seat is not None and not 0 <= viewpoint.seat < record.players:
        return f"there is no seat {viewpoint.seat}: seats are 0 to {record.players - 1}"
    if deal is not None and not 1 <= deal <= len(record.deals):
        return f"there is no deal {deal}: the record has {len(record.deals)} deals"
    return None


def _ask(console: Console, renderer: GameRenderer, pause: Pause, prompt: str) -> str:
    _print(console, renderer.flush())
    try:
        answer = pause(prompt)
    except (EOFError, KeyboardInterrupt):
        return QUIT
    return answer.strip().lower()[:1] or NEXT_TRICK


def _print(console: Console, renderables: Iterable[RenderableType]) -> None:
    for renderable in renderables:
        console.print(renderable)
