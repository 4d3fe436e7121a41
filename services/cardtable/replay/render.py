"""Rich renderables for a replay: cards with suit symbols and colours, deals, tricks and scores.

:class:`GameRenderer` turns the :class:`~cardtable.replay.session.ReplayStep` sequence of one
viewpoint into lines and tables, in game order: each deal's header (dealer, cards each, trump,
passing direction, declarer), the cards dealt to the seats the viewpoint may see, the bidding,
passes, exchanges and talon, one row per trick (who led, what each seat played, who won), the
deal's scores with the running totals, and the final places. Everything it shows comes from the
step's facts and observations, so a seat's replay shows what that seat saw and nothing more.
What only one game has (its own facts, its deal headers, the rows above a deal's totals) the
game's registered narration (``cardtable.engine.games.<game>.narration``) puts in words.

Untrusted text from a record (player names) is only ever put in :class:`~rich.text.Text`
objects, never in console markup, and is stripped of control characters.

>>> from rich.console import Console
>>> console = Console(width=40, color_system=None)
>>> console.print(cards_text(["10H", "AS", "2C", "KS"]))
A♠ K♠  10♥  2♣
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from cardtable.engine.cards import (
    RANK_TEXTS,
    SUIT_NAME_OF,
    SUIT_SYMBOL_OF,
    format_card,
)
from cardtable.engine.facts import (
    CardPlayed,
    CardsDealt,
    CardTurnedUp,
    DealScored,
    DealStarted,
    Fact,
    GameEnded,
    TrickWon,
    TrumpChosen,
)
from cardtable.engine.narration import (
    CardMark,
    CardsMark,
    Gathered,
    Narrator,
    Part,
    Quiet,
    ScoreRow,
    Signed,
    SuitMark,
    Told,
    Tone,
    counted,
)
from cardtable.engine.options import options_to_dict
from cardtable.engine.record import GameRecord
from cardtable.engine.registry import game_definition, game_spec
from cardtable.replay.audit import (
    CHECKS,
    FAILED,
    FORMAT,
    NOT_RUN,
    PARTIAL,
    PASSED,
    RESULTS,
    RULES,
    SHUFFLE,
    AuditReport,
)
from cardtable.replay.session import ReplayStep, Viewpoint

RED_SUITS = frozenset("HD")
#: Hands are shown by suit in alternating colours, each suit from its highest card down.
DISPLAY_SUITS = "SHCD"

RED = "bold red"
BLACK = "bold"
DIM = "dim"
NOTE = "italic"

MAX_NAME = 16
SEAT_WIDTH = 8
CARD_WIDTH = 7


# -- cards --------------------------------------------------------------------------------
def card_text(card: str | int) -> Text:
    """One card as rank and suit symbol (``10♥``), red for hearts and diamonds."""
    text = format_card(card) if isinstance(card, int) else card
    rank, suit = text[:-1], text[-1]
    return Text(rank + SUIT_SYMBOL_OF[suit], style=RED if suit in RED_SUITS else BLACK)


def _display_key(card: str) -> tuple[int, int]:
    return DISPLAY_SUITS.index(card[-1]), -RANK_TEXTS.index(card[:-1])


def display_order(cards: Iterable[str]) -> list[str]:
    """A hand as people are shown it: by suit (♠ ♥ ♣ ♦), each suit high to low."""
    return sorted(cards, key=_display_key)


def cards_text(cards: Iterable[str | int], *, in_order: bool = False) -> Text:
    """Cards for people: by suit (♠ ♥ ♣ ♦), high to low, a wider gap between suits.

    ``in_order`` keeps the given order instead (a trick, in play order).
    """
    texts = [format_card(card) if isinstance(card, int) else card for card in cards]
    if not texts:
        return Text("none", style=DIM)
    if not in_order:
        texts = display_order(texts)
    line = Text()
    for index, card in enumerate(texts):
        if index:
            line.append("  " if not in_order and texts[index - 1][-1] != card[-1] else " ")
        line.append_text(card_text(card))
    return line


def suit_text(letter: str) -> Text:
    """A suit as symbol and name: ``♥ hearts``."""
    return Text(
        f"{SUIT_SYMBOL_OF[letter]} {SUIT_NAME_OF[letter]}",
        style=RED if letter in RED_SUITS else BLACK,
    )


def _cell(text: Text | str, width: int, *, right: bool = False) -> Text:
    cell = text.copy() if isinstance(text, Text) else Text(text)
    cell.truncate(width, overflow="ellipsis")
    cell.align("right" if right else "left", width)
    return cell


def _row(*cells: Text) -> Text:
    row = Text(" ").join(cells)
    row.rstrip()
    return row


def clean_name(value: Any) -> str | None:
    """A player's name from a record, safe to show: printable characters only, kept short."""
    if not isinstance(value, str):
        return None
    cleaned = "".join(char for char in value if char.isprintable()).strip()
    return cleaned[:MAX_NAME] or None


# -- the renderer -------------------------------------------------------------------------
@dataclass
class _Deal:
    """What the renderer remembers of the deal being shown; the game's narration keeps its own."""

    number: int
    dealt: dict[int, list[str]] = field(default_factory=dict)
    tricks_won: dict[int, int] = field(default_factory=dict)
    trick: dict[int, str] = field(default_factory=dict)  # seat -> card, in play order
    tricks_seen: int = 0
    play_started: bool = False


#: How each tone of a game's words looks.
TONE_STYLES = {Tone.PLAIN: "", Tone.NOTE: NOTE, Tone.STRONG: "bold", Tone.QUIET: DIM}


def part_text(part: Part) -> Text | str | tuple[str, str]:
    """One part of a game's words as rich text: cards with suit symbols, signed scores ..."""
    if isinstance(part, str):
        return part
    if isinstance(part, CardMark):
        return card_text(part.card)
    if isinstance(part, CardsMark):
        return cards_text(part.cards)
    if isinstance(part, SuitMark):
        return suit_text(part.letter)
    if isinstance(part, Quiet):
        return (part.text, DIM)
    return _score_text(part.points, signed=True)


def parts_text(parts: Iterable[Part]) -> Text:
    return Text.assemble(*(part_text(part) for part in parts))


class GameRenderer:
    """Renderables for one viewpoint's replay of one record, step by step.

    Call :meth:`intro` once, :meth:`render` for each step in order, and :meth:`close` at the
    end. Consecutive bids are gathered on one line, so a step's output can appear with a later
    step's; :meth:`flush` forces it out (before pausing, say). What is particular to the game
    (its own facts, a deal's heading, the score rows) its registered narration tells.
    """

    def __init__(self, record: GameRecord, viewpoint: Viewpoint) -> None:
        self.record = record
        self.viewpoint = viewpoint
        self.players = record.players
        seats = record.raw.get("seats")
        names: dict[int, str | None] = {}
        for entry in seats if isinstance(seats, list) else []:
            if isinstance(entry, Mapping) and isinstance(entry.get("seat"), int):
                names[entry["seat"]] = clean_name(entry.get("name"))
        self.names = [names.get(seat) for seat in range(self.players)]
        self.narrator = Narrator(viewpoint.seat, record.spec.teams)
        self.narration = game_definition(record.spec.name).narration(self.narrator, self.players)
        self._out: list[RenderableType] = []
        self._pending: tuple[Hashable, Text] | None = None
        self._deal = _Deal(number=0)

    # -- words -----------------------------------------------------------------------------
    def who(self, seat: int) -> str:
        """How a sentence names a seat: ``you`` from its own point of view, else ``seat 2``.

        Names, when the record has them, are listed once at the top and in the final places.
        """
        return self.narrator.who(seat)

    # -- output ----------------------------------------------------------------------------
    def _emit(self, renderable: RenderableType) -> None:
        self.flush_pending()
        self._out.append(renderable)

    def _line(self, *parts: Text | str | tuple[str, str], style: str = "") -> None:
        self._emit(Text.assemble(*parts, style=style))

    def _gather(self, key: Hashable, label: str, item: Text) -> None:
        """Add ``item`` to the line gathering ``key`` (the bids of one round), or start one."""
        if self._pending is not None and self._pending[0] == key:
            self._pending[1].append(" · ", style=DIM).append_text(item)
            return
        self.flush_pending()
        self._pending = (key, Text.assemble((label, NOTE), " ", item))

    def flush_pending(self) -> None:
        if self._pending is not None:
            self._out.append(self._pending[1])
            self._pending = None

    def _take(self) -> list[RenderableType]:
        out, self._out = self._out, []
        return out

    def flush(self) -> list[RenderableType]:
        """Everything held back so far (a gathered line)."""
        self.flush_pending()
        return self._take()

    # -- the game --------------------------------------------------------------------------
    def intro(self) -> list[RenderableType]:
        record = self.record
        # The engine's reading of the options (defaults filled in), not the record's raw text.
        state = record.spec.new_game(record.players, record.options, record.first_dealer)
        options = ", ".join(
            f"{key}={value}" for key, value in options_to_dict(state.options).items()
        )
        title = f"{record.spec.title} · {self.players} players"
        if options:
            title += f" · {options}"
        self._emit(Rule(Text(title, style="bold")))
        line = Text.assemble(
            (self.viewpoint.describe(), NOTE),
            f" · first dealer seat {record.first_dealer} · {counted(len(record.deals), 'deal')}"
            " recorded",
        )
        table_id = record.raw.get("table_id")
        if isinstance(table_id, str) and table_id.isprintable():
            line.append(f" · table {table_id[:40]}")
        self._emit(line)
        named = [seat for seat in range(self.players) if self.names[seat]]
        if named:
            self._line("players: ", ", ".join(f"seat {s} {self.names[s]}" for s in named))
        if record.spec.teams:
            teams = " against ".join(self.narrator.team(team) for team in record.spec.teams)
            self._line("teams: ", teams)
        return self.flush()

    def render(self, step: ReplayStep) -> list[RenderableType]:
        """The renderables for one step (some may wait for the next step: see :meth:`flush`)."""
        self._hidden_action(step)
        for fact in step.facts:
            self._fact(fact, step)
        public = step.public
        if public.get("phase") == "play" and not self._deal.play_started:
            self._start_play(step)
        if step.trick is not None or step.deal_scored is not None:
            self.flush_pending()
        return self._take()

    def close(self) -> list[RenderableType]:
        """The end of the record: a trick left unfinished, if the game stopped in one."""
        if self._deal.trick:
            leader = next(iter(self._deal.trick))  # the trick's cards are kept in play order
            self._trick_row(self._deal.tricks_seen + 1, leader, None, 0)
            self._line(("the record ends here, in the middle of a trick", NOTE))
        return self.flush()

    # -- facts -----------------------------------------------------------------------------
    def _fact(self, fact: Fact, step: ReplayStep) -> None:
        """The facts every game shares are told here; the game's narration tells its own."""
        deal = self._deal
        if isinstance(fact, DealStarted):
            self._deal_header(fact, step)
        elif isinstance(fact, CardsDealt):
            again = fact.seat in deal.dealt
            deal.dealt.setdefault(fact.seat, []).extend(format_card(c) for c in fact.cards)
            verb = ("then get", "then gets") if again else ("are dealt", "is dealt")
            self._line(self.narrator.does(fact.seat, *verb), ": ", cards_text(fact.cards))
        elif isinstance(fact, CardTurnedUp):
            pass  # shown in the deal's header, from the observation
        elif isinstance(fact, TrumpChosen):
            if fact.seat is not None:  # else the turned-up card set it: shown in the header
                self._line("trump ", suit_text(fact.trump), f", chosen by {self.who(fact.seat)}")
        elif isinstance(fact, CardPlayed):
            deal.trick[fact.seat] = format_card(fact.card)
        elif isinstance(fact, TrickWon):
            self._trick(fact)
        elif isinstance(fact, DealScored):
            self._deal_scores(fact, step)
        elif isinstance(fact, GameEnded):
            self._game_ended(fact)
        else:
            self._told(self.narration.tell(fact, step.public))

    def _told(self, told: Iterable[Told]) -> None:
        for item in told:
            if isinstance(item, Gathered):
                self._gather(item.key, item.label, parts_text(item.item))
            else:
                parts = (part_text(part) for part in item.parts)
                self._line(*parts, style=TONE_STYLES[item.tone])

    def _hidden_action(self, step: ReplayStep) -> None:
        """Say that a seat acted when what it did is hidden from the viewpoint."""
        if step.seat is None or step.action is not None:
            return
        kind = step.action_kind or ""
        self._told(self.narration.hidden_action(step.seat, kind, step.facts, step.public))

    # -- deals -----------------------------------------------------------------------------
    def _deal_header(self, fact: DealStarted, step: ReplayStep) -> None:
        self.flush_pending()
        self._deal = _Deal(number=fact.deal_number)
        public = step.public
        title = f"Deal {fact.deal_number}"
        total = public.get("deals_total")
        if isinstance(total, int):
            title += f" of {total}"
        self._emit(Rule(Text(f"{title} · dealer {self.who(fact.dealer)}"), align="left"))
        details = self.narration.start_deal(fact, public)
        if details:
            self._emit(Text(" · ", style=DIM).join(parts_text(parts) for parts in details))

    def _start_play(self, step: ReplayStep) -> None:
        """Before the first trick: hands that changed since the deal, and the trick header."""
        deal = self._deal
        deal.play_started = True
        self.narration.play_started(step.public)
        changed = {
            seat: list(observation.get("hand") or [])
            for seat, observation in step.observations.items()
            if seat is not None
        }
        if any(sorted(hand) != sorted(deal.dealt.get(seat, [])) for seat, hand in changed.items()):
            for seat, hand in changed.items():
                label = "your hand" if seat == self.viewpoint.seat else f"hand of seat {seat}"
                self._line(f"{label} at the start of play: ", cards_text(hand))
        leader = step.public.get("leader")
        if isinstance(leader, int):
            self._line(self.narrator.does(leader, "lead", "leads"), " the first trick", style=NOTE)
        self._header_row(tricks=True)

    def _header_row(self, *, tricks: bool) -> None:
        """Column titles: one column per seat, shared by the trick rows and the score rows."""
        cells = [
            _cell("#" if tricks else "", 3, right=True),
            _cell("led by" if tricks else "", SEAT_WIDTH),
        ]
        cells += [_cell(self.who(seat), CARD_WIDTH) for seat in range(self.players)]
        if tricks:
            cells.append(_cell("won by", SEAT_WIDTH))
            if self.narration.trick_points:
                cells.append(_cell("points", 6, right=True))
        self._emit(Text.assemble(_row(*cells), style="bold underline"))

    def _summary_row(self, label: str, values: Sequence[Text | str], style: str = "") -> None:
        cells = [_cell("", 3), _cell(Text(label, style=NOTE), SEAT_WIDTH)]
        cells += [_cell(value, CARD_WIDTH) for value in values]
        self._emit(Text.assemble(_row(*cells), style=style))

    def _trick(self, fact: TrickWon) -> None:
        deal = self._deal
        if not deal.trick:  # no CardPlayed seen: place the cards from the leader
            direction = self.record.spec.direction
            for position, card in enumerate(fact.cards):
                seat = (fact.leader + direction * position) % self.players
                deal.trick[seat] = format_card(card)
        deal.tricks_seen = fact.trick_number
        deal.tricks_won[fact.seat] = deal.tricks_won.get(fact.seat, 0) + 1
        self._trick_row(fact.trick_number, fact.leader, fact.seat, fact.points)
        deal.trick = {}

    def _trick_row(self, number: int, leader: int | None, winner: int | None, points: int) -> None:
        deal = self._deal
        cells = [
            _cell(str(number), 3, right=True),
            _cell(self.who(leader) if leader is not None else "", SEAT_WIDTH),
        ]
        for seat in range(self.players):
            card = deal.trick.get(seat)
            shown = card_text(card) if card else Text("·", style=DIM)
            if seat == winner:
                shown.stylize("underline")
            cells.append(_cell(shown, CARD_WIDTH))
        cells.append(
            _cell(
                Text(self.who(winner), style="bold") if winner is not None else "…",
                SEAT_WIDTH,
            )
        )
        if self.narration.trick_points and winner is not None:
            cells.append(_cell(str(points), 6, right=True))
        self._emit(_row(*cells))

    def _deal_scores(self, fact: DealScored, step: ReplayStep) -> None:
        """The deal's scores and the running totals, in the seat columns of the tricks."""
        deal = self._deal
        if not deal.play_started:
            self._header_row(tricks=False)
        for row in self.narration.score_rows(fact, deal.tricks_won, step.public):
            self._score_row(row)
        self._summary_row("total", [str(total) for total in fact.totals], style="bold")

    def _score_row(self, row: ScoreRow) -> None:
        cells = [
            _score_text(cell.points, signed=True)
            if isinstance(cell, Signed)
            else parts_text([cell])
            for cell in row.cells
        ]
        self._summary_row(row.label, cells, style=TONE_STYLES[row.tone])

    def _game_ended(self, fact: GameEnded) -> None:
        self._emit(Rule(Text("Game over", style="bold")))
        table = Table(box=box.SIMPLE_HEAD, show_edge=False)
        table.add_column("place", justify="right")
        table.add_column("seat")
        table.add_column("total", justify="right")
        order = sorted(range(self.players), key=lambda seat: (fact.places[seat], seat))
        for seat in order:
            place = fact.places[seat]
            name = self.names[seat]
            table.add_row(
                Text(str(place), style="bold green" if place == 1 else ""),
                Text(f"{self.who(seat)} ({name})" if name else self.who(seat)),
                str(fact.totals[seat]),
            )
        self._emit(table)


def _score_text(score: int, signed: bool) -> Text:
    if not signed:
        return Text(str(score))
    return Text(f"{score:+d}", style="green" if score > 0 else "red" if score < 0 else "")


# -- audit verdicts -----------------------------------------------------------------------
MAX_PROBLEMS_SHOWN = 10
_MARKS = {PASSED: ("✓", "green"), FAILED: ("✗", "bold red"), PARTIAL: ("~", "yellow")}


def render_audit(
    report: AuditReport, source: str, log_checks: Sequence[tuple[str, bool, str]] = ()
) -> list[RenderableType]:
    """An audit's verdict for people: what was checked, each check's outcome, the problems.

    ``log_checks`` (name, passed, description) are checks of where the record came from (a
    table's log: its signatures, no gap): shown under the heading, before the record's own.
    """
    out: list[RenderableType] = [Text.assemble(("audit of ", "bold"), (source, "bold"))]
    width = max([9, *(len(check) + 1 for check, _, _ in log_checks)])  # names, one space after
    if report.game is not None:
        out.append(
            Text(
                f"{game_spec(report.game).title}, {report.players} players · "
                f"{counted(report.deals, 'deal')} · {counted(report.actions, 'action')} · "
                f"{counted(report.tricks, 'trick')} · record version {report.version}",
                style=DIM,
            )
        )
    descriptions = {
        FORMAT: "the record reads and every action text parses",
        SHUFFLE: (
            f"{report.shuffle_proofs} of {counted(report.deals, 'deal')}: "
            "each seed matches its commitment and gives its deck"
            if report.shuffle_proofs or report.checks[SHUFFLE] == FAILED
            else "no shuffle proofs in this record: nothing to check"
        ),
        RULES: "every action is legal when re-applied",
        RESULTS: (
            "compared up to the refused action"
            if report.checks[RESULTS] == PARTIAL
            else "tricks, scores, totals and places match the engine"
        ),
    }
    for check, passed, description in log_checks:
        mark, style = _MARKS[PASSED if passed else FAILED]
        out.append(
            Text.assemble("  ", (mark, style), " ", (f"{check:<{width}}", "bold"), description)
        )
    for check in CHECKS:
        status = report.checks[check]
        mark, style = _MARKS.get(status, ("–", DIM))
        if check == SHUFFLE and status == PASSED and not report.shuffle_proofs:
            mark, style = "–", DIM
        out.append(
            Text.assemble(
                "  ",
                (mark, style),
                " ",
                (f"{check:<{width}}", "bold"),
                (
                    descriptions[check] if status != NOT_RUN else "not run",
                    DIM if mark == "–" else "",
                ),
            )
        )
    problems = sorted(report.problems, key=lambda problem: problem.position)
    for problem in problems[:MAX_PROBLEMS_SHOWN] if len(problems) > 1 else ():
        out.append(Text.assemble("    ", (f"{problem.check}: ", "red"), str(problem)))
    if len(problems) > MAX_PROBLEMS_SHOWN:
        out.append(Text(f"    … and {len(problems) - MAX_PROBLEMS_SHOWN} more", style=DIM))
    first = report.first
    if first is None:
        out.append(Text.assemble(("PASSED", "bold green"), ": every recorded fact matches"))
    else:
        out.append(Text.assemble(("FAILED", "bold red"), f": {first}"))
    return out
