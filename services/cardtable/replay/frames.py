"""The replay viewer's frames: what the HTML page shows after each input, worked out here.

The page (:mod:`cardtable.replay.html`) only displays. Everything it shows that takes game
knowledge (each seat's hand, the trick and who won it, bids and contracts, trump, each deal's
scores, the places and what the result is worth in rating points) is read here from the
engine's replay of the record, through :func:`~cardtable.replay.session.replay_steps`, so a
seat's page holds what that seat saw and nothing more. The words under each frame are the
terminal replay's own lines (:class:`~cardtable.replay.render.GameRenderer`) as plain text.

A frame is JSON-ready: ``hands`` holds per seat either ``{"cards": [...]}`` (a hand the
viewpoint sees, in display order) or ``{"count": n}`` (face down), ``trick`` the cards on the
table in play order, ``scored`` how many rows of the score sheet (``deals``) are filled in.

>>> from cardtable.engine.record import load_record
>>> from cardtable_tools.simulation.records import record_random_game
>>> record = load_record(record_random_game("hearts", 4, {"quick": True}, 3))
>>> viewer = viewer_data(record, Viewpoint(seat=1))
>>> first = viewer["frames"][1]
>>> [sorted(hand) for hand in first["hands"]]
[['count'], ['cards'], ['count'], ['count']]
>>> viewer["frames"][-1]["over"], len(viewer["deals"]) == len(record.deals)
(True, True)
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, RenderableType

from cardtable.engine.actions import (
    DISCARD,
    GIVE_CARD,
    PASS,
    PASS_CARDS,
    PLAY_CARD,
    format_action,
)
from cardtable.engine.cards import SUIT_SYMBOL_OF, format_card
from cardtable.engine.facts import CardPlayed, DealStarted, GameEnded
from cardtable.engine.narration import card_words, counted
from cardtable.engine.options import options_to_dict
from cardtable.engine.rating import INITIAL_RATING, rating_changes
from cardtable.engine.record import GameRecord
from cardtable.replay.render import GameRenderer, display_order
from cardtable.replay.session import ReplayError, ReplayStep, Viewpoint, replay_steps

#: Columns of the terminal lines shown beside the table (the trick rows of seven seats fit).
LOG_WIDTH = 84
#: Per deal, the fields a record keeps that show nothing a viewpoint did not see.
PUBLIC_DEAL_FIELDS = ("number", "dealer", "tricks", "scores", "totals")

_HIDDEN_KINDS = {
    PASS_CARDS: "passes three cards (hidden)",
    DISCARD: "puts cards away face down (hidden)",
    GIVE_CARD: "gives a card (hidden)",
}


def viewer_data(record: GameRecord, viewpoint: Viewpoint) -> dict[str, Any]:
    """Everything the page shows of ``record`` from ``viewpoint``, as JSON-ready data.

    A record the engine refuses part-way is shown up to the refused input, and ``stopped``
    says where and why.
    """
    renderer = GameRenderer(record, viewpoint)
    lines = _Lines()
    builder = _Frames(record, viewpoint, renderer)
    stopped: str | None = None
    try:
        for step in replay_steps(record, viewpoint):
            builder.add(step, lines.of([*renderer.render(step), *renderer.flush()]))
    except ReplayError as error:
        stopped = str(error)
    state = record.spec.new_game(record.players, record.options, record.first_dealer)
    options = options_to_dict(state.options)
    return {
        "game": record.spec.name,
        "title": record.spec.title,
        "players": record.players,
        "options": {key: _option_text(value) for key, value in options.items()},
        "viewpoint": viewpoint.describe(),
        "viewpoint_seat": viewpoint.seat,
        "open": viewpoint.open,
        "seats": [_seat_label(renderer, seat) for seat in range(record.players)],
        "teams": [list(team) for team in record.spec.teams],
        "frames": builder.frames,
        "deals": builder.deals,
        "result": builder.result,
        "ratings": _ratings(record, builder.result),
        "stopped": stopped,
    }


def deal_start(viewer: Mapping[str, Any], deal: int) -> int:
    """The index of the frame that deals the ``deal``-th deal (from 1), or 0."""
    for index, frame in enumerate(viewer["frames"]):
        if frame["deal_index"] + 1 == deal:
            return index
    return 0


def embedded_record(record: GameRecord, viewpoint: Viewpoint) -> dict[str, Any]:
    """The record as the page carries it: whole for open hands, else only its public part.

    Decks, shuffle seeds and action texts would show every hand from the page's source, so a
    seat's or a spectator's page keeps each deal's tricks and scores (public once played).
    """
    raw = dict(record.raw)
    if viewpoint.open:
        return raw
    deals = raw.get("deals")
    raw["deals"] = [
        {key: deal[key] for key in PUBLIC_DEAL_FIELDS if key in deal}
        for deal in (deals if isinstance(deals, list) else [])
        if isinstance(deal, Mapping)
    ]
    raw["note"] = f"decks and actions left out: this page shows {viewpoint.describe()}"
    return raw


class _Lines:
    """Rich renderables as the plain lines a terminal would print."""

    def __init__(self) -> None:
        self.console = Console(
            file=io.StringIO(), width=LOG_WIDTH, color_system=None, record=True, highlight=False
        )

    def of(self, renderables: Iterable[RenderableType]) -> list[str]:
        for renderable in renderables:
            self.console.print(renderable)
        text = self.console.export_text(clear=True)
        return [line.rstrip() for line in text.splitlines()]


class _Frames:
    """The frames of one replay, one per step, with the score sheet filled in as it goes."""

    def __init__(self, record: GameRecord, viewpoint: Viewpoint, renderer: GameRenderer) -> None:
        self.spec = record.spec
        self.players = record.players
        self.viewpoint = viewpoint
        self.renderer = renderer
        self.narration = renderer.narration  # what is particular to the game
        self.frames: list[dict[str, Any]] = []
        self.deals: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self.trick: list[dict[str, Any]] = []  # the cards on the table, in play order
        self.tricks_won = [0] * record.players

    def add(self, step: ReplayStep, log: list[str]) -> None:
        public = step.public
        for fact in step.facts:
            if isinstance(fact, DealStarted):
                self.trick, self.tricks_won = [], [0] * self.players
            elif isinstance(fact, CardPlayed):
                self.trick.append({"seat": fact.seat, "card": format_card(fact.card)})
        trick, winner = self.trick, None
        won = step.trick
        if won is not None:
            if not trick:  # the viewpoint saw no CardPlayed: place the cards from the leader
                direction = self.spec.direction
                trick = [
                    {"seat": (won.leader + direction * position) % self.players, "card": card}
                    for position, card in enumerate(format_card(c) for c in won.cards)
                ]
            winner = won.seat
            self.tricks_won[won.seat] += 1
            self.trick = []
        scored = step.deal_scored
        if scored is not None:
            self.deals.append(
                {
                    "number": scored.deal_number,
                    "scores": list(scored.scores),
                    "totals": list(scored.totals),
                }
            )
        ended = step.game_ended
        if ended is not None:
            self.result = {"totals": list(ended.totals), "places": list(ended.places)}
        self.frames.append(
            {
                "deal_index": step.deal_index,
                "deal": step.deal_number,
                "dealer": public.get("dealer"),
                "phase": public.get("phase"),
                "caption": self._caption(step),
                "log": log,
                "hands": [self._hand(step, seat) for seat in range(self.players)],
                "trick": list(trick),
                "trick_winner": winner,
                "to_act": [] if public.get("over") else list(public.get("to_act") or []),
                "notes": [self._notes(public, seat) for seat in range(self.players)],
                "chips": self._chips(public),
                "totals": list(public.get("totals") or []),
                "scored": len(self.deals),
                "over": ended is not None,
            }
        )

    # -- what each seat shows --------------------------------------------------------------
    def _hand(self, step: ReplayStep, seat: int) -> dict[str, Any]:
        observation = step.observations.get(seat)
        if observation is not None:
            return {"cards": display_order(observation.get("hand") or [])}
        sizes = step.public.get("hand_sizes") or []
        return {"count": sizes[seat] if seat < len(sizes) else 0}

    def _notes(self, public: Mapping[str, Any], seat: int) -> list[str]:
        """Short words under a seat: its bid or contract part, and what it has won so far."""
        notes = self.narration.seat_notes(public, seat)
        if self.tricks_won[seat]:
            notes.append(counted(self.tricks_won[seat], "trick"))
        return notes

    def _chips(self, public: Mapping[str, Any]) -> list[str]:
        """The deal's public facts on the table: trump, turned-up card, contract, passing."""
        return self.narration.table_chips(public)

    def _caption(self, step: ReplayStep) -> str:
        """One line for the step: who did what, and what it ended (a trick, a deal, the game)."""
        who = self.renderer.who
        parts: list[str] = []
        if step.seat is None:
            dealer = step.public.get("dealer")
            dealt = f"deal {step.deal_number}"
            if isinstance(dealer, int):
                dealt += f", dealt by {who(dealer)}"
            parts.append(dealt)
        elif step.action is None:
            kind = step.action_kind or ""
            parts.append(f"{who(step.seat)}: {_HIDDEN_KINDS.get(kind, kind)}")
        else:
            parts.append(f"{who(step.seat)}: {_words(format_action(step.action))}")
        won = step.trick
        if won is not None:
            trick_points = self.narration.trick_points
            points = f" ({counted(won.points, 'point')})" if trick_points else ""
            parts.append(f"{who(won.seat)} won trick {won.trick_number}{points}")
        if step.deal_scored is not None:
            parts.append(f"deal {step.deal_scored.deal_number} scored")
        if any(isinstance(fact, GameEnded) for fact in step.facts):
            parts.append("game over")
        return " · ".join(parts)


def _words(action_text: str) -> str:
    """An action's text for people: cards and suits with their symbols (``play Q♠``)."""
    verb, *rest = action_text.split()
    shown = []
    for word in rest:
        if word in SUIT_SYMBOL_OF:
            shown.append(SUIT_SYMBOL_OF[word])
        elif len(word) >= 2 and word[-1] in SUIT_SYMBOL_OF and verb in _CARD_VERBS:
            shown.append(card_words(word))
        else:
            shown.append(word)
    return " ".join([verb, *shown])


#: The verbs whose words are cards (the others' are numbers, suits or contracts).
_CARD_VERBS = frozenset({PLAY_CARD, GIVE_CARD, PASS, DISCARD})


def _seat_label(renderer: GameRenderer, seat: int) -> dict[str, Any]:
    name = renderer.names[seat]
    return {"seat": seat, "label": renderer.who(seat), "name": name}


def _ratings(record: GameRecord, result: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the result is worth in rating points, or why the page cannot say.

    Records carry no ratings (docs/record-format.md): the players' ratings before the game,
    which weigh Hearts' and Belote's changes, live with the scoring service. The page shows
    the changes between equally rated players (:data:`INITIAL_RATING` each), from the one
    module that holds the formulas, and says so.
    """
    basis = (
        f"what this result is worth between equally rated players ({INITIAL_RATING:g} each): "
        "records hold no ratings, and a rated table's real changes also weigh the players' "
        "ratings before the game"
    )
    if result is None:
        return {"changes": None, "note": "the game is not over: no rating change yet"}
    ended_early = record.result.get("ended_early")
    if ended_early:
        return {
            "changes": None,
            "note": f"the game ended early ({ended_early}): rating changes depend on who left",
        }
    totals: Sequence[int] = result["totals"]
    changes = rating_changes(record.spec.name, totals, [INITIAL_RATING] * record.players)
    return {"changes": [round(change, 1) for change in changes], "note": basis}


def _option_text(value: object) -> str:
    """An option as a table's settings write it (``quick=false``, not Python's ``False``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
