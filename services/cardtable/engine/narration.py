"""How a replay tells a game: each game's own facts and details as words, cards marked for display.

A replay (:mod:`cardtable.replay.render`, the terminal; :mod:`cardtable.replay.frames`, the page)
tells the facts every game shares (deals, cards dealt, tricks, scores, the end) itself, and asks
the game's :class:`GameNarration` for the rest: its own facts (a Whist bid, a Hearts pass, a
3-5-8 exchange), the details under a deal's heading, the score rows under its tricks, and the
short notes the page shows by each seat and on the table. Each game's package has one
(``games/<game>/narration.py``).

The words are plain text: cards, hands and suits are marked (:class:`CardMark`,
:class:`CardsMark`, :class:`SuitMark`) and tones named (:class:`Tone`), and the replay chooses
how they look (suit symbols, colours). The narration sees only what the replay gives it: the
viewpoint's facts and public observation, so it can never tell a card the viewpoint did not see.

>>> narrator = Narrator(seat=1)
>>> narrator.who(1), narrator.who(2), narrator.does(2, "pass", "passes")
('you', 'seat 2', 'seat 2 passes')
>>> counted(1, "deal"), counted(3, "trick"), trump_words("H")
('1 deal', '3 tricks', 'trump ♥ hearts')
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cardtable.engine.cards import SUIT_NAME_OF, SUIT_SYMBOL_OF
from cardtable.engine.facts import DealScored, DealStarted, Fact

Public = Mapping[str, Any]


class Tone(StrEnum):
    """How a line or row reads: plain, a note in passing, a strong moment, or in the background."""

    PLAIN = "plain"
    NOTE = "note"
    STRONG = "strong"
    QUIET = "quiet"


@dataclass(frozen=True)
class CardMark:
    """One card (``"10H"``), shown with its suit symbol."""

    card: str


@dataclass(frozen=True)
class CardsMark:
    """Several cards, shown as a hand: by suit, each suit from its highest card down."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class SuitMark:
    """A suit by its letter (``"H"``), shown as symbol and name."""

    letter: str


@dataclass(frozen=True)
class Quiet:
    """Words in the background of a line (the contracts a 3-5-8 declarer has left)."""

    text: str


@dataclass(frozen=True)
class Signed:
    """A deal's score shown with its sign (``+8``, ``-2``): the games where scores go both ways."""

    points: int


Part = str | CardMark | CardsMark | SuitMark | Quiet | Signed


@dataclass(frozen=True)
class Line:
    """One line of the replay."""

    parts: tuple[Part, ...]
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True)
class Gathered:
    """One item of a line that gathers several facts (a round of bids), ``key`` naming the line.

    Items with the same key in a row share one line, which starts with ``label``.
    """

    key: Hashable
    label: str
    item: tuple[Part, ...]


Told = Line | Gathered


@dataclass(frozen=True)
class ScoreRow:
    """A row under a deal's tricks: a label and one cell per seat."""

    label: str
    cells: tuple[Part, ...]
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True)
class Narrator:
    """How the replay's sentences name seats, from the viewpoint's seat (``None``: no seat)."""

    seat: int | None
    teams: tuple[tuple[int, ...], ...] = ()

    def who(self, seat: int) -> str:
        """``you`` from a seat's own point of view, else ``seat 2``."""
        return "you" if seat == self.seat else f"seat {seat}"

    def does(self, seat: int, plain: str, third_person: str) -> str:
        """``you pass`` or ``seat 2 passes``."""
        return f"{self.who(seat)} {plain if seat == self.seat else third_person}"

    def team(self, seats: Sequence[int]) -> str:
        return " & ".join(self.who(seat) for seat in seats)

    def team_of(self, seat: int) -> str:
        """The seat's team (Belote's partners), or the seat alone in a game without teams."""
        return self.team(next((team for team in self.teams if seat in team), (seat,)))


def counted(number: int, noun: str) -> str:
    """``1 deal``, ``3 deals``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def card_words(card: str) -> str:
    """A card with its suit symbol, as plain text: ``10♥``."""
    return card[:-1] + SUIT_SYMBOL_OF[card[-1]]


def trump_words(letter: str) -> str:
    """``trump ♥ hearts``; nothing for no suit."""
    if letter not in SUIT_SYMBOL_OF:
        return ""
    return f"trump {SUIT_SYMBOL_OF[letter]} {SUIT_NAME_OF[letter]}"


def tricks_row(tricks_won: Mapping[int, int], players: int) -> ScoreRow:
    """Each seat's tricks this deal."""
    return ScoreRow("tricks", tuple(str(tricks_won.get(seat, 0)) for seat in range(players)))


def score_row(scores: Sequence[int], *, signed: bool) -> ScoreRow:
    """Each seat's score for the deal."""
    cells: tuple[Part, ...] = tuple(Signed(score) if signed else str(score) for score in scores)
    return ScoreRow("score", cells)


class GameNarration(ABC):
    """How a replay tells one game. One per replay, so it may remember the deal being shown."""

    #: Whether a trick's card points are worth showing (Hearts' penalty points, Belote's).
    trick_points = False

    def __init__(self, narrator: Narrator, players: int) -> None:
        self.narrator = narrator
        self.players = players

    @abstractmethod
    def start_deal(self, fact: DealStarted, public: Public) -> list[tuple[Part, ...]]:
        """A new deal (forget the last one): the details its heading shows, one tuple each."""

    @abstractmethod
    def tell(self, fact: Fact, public: Public) -> list[Told]:
        """The game's own ``fact`` in words; nothing for a fact it leaves unsaid or does not own.

        ``public`` is the viewpoint's observation after the input the fact came from.
        """

    def hidden_action(
        self, seat: int, kind: str, facts: Sequence[Fact], public: Public
    ) -> list[Line]:
        """Words for an action of ``kind`` whose details the viewpoint does not see."""
        return []

    def play_started(self, public: Public) -> None:
        """The deal's first trick is about to be led (a game may note what it needs later)."""
        return None

    @abstractmethod
    def score_rows(
        self, fact: DealScored, tricks_won: Mapping[int, int], public: Public
    ) -> list[ScoreRow]:
        """The rows above the running totals when a deal is scored."""

    @abstractmethod
    def seat_notes(self, public: Public, seat: int) -> list[str]:
        """Short words by a seat on the page: its bid, its part of the contract, its points."""

    @abstractmethod
    def table_chips(self, public: Public) -> list[str]:
        """The deal's public facts on the page's table: trump, a turned card, the passing."""


#: What a game registers for its narration: given the narrator and the number of players.
NarrationFactory = Callable[[Narrator, int], GameNarration]
