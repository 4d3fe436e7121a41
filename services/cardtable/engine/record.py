"""The game record: one JSON document that holds a whole game and lets anyone check it.

A record holds the game, its options, the seats, each deal's deck order, every action in
order, and the results the engine produced (tricks, deal scores, totals, places). Because a
game is fully determined by its inputs, :func:`verify_record` replays the inputs through the
engine and compares every recorded result with what the engine computes; the first action the
rules refuse, or the first result that differs, is reported with its deal and position.

The format is documented in ``docs/record-format.md``. Version 1 is the current one; the
reader upgrades older versions in :func:`upgrade_record` so records made today stay readable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardtable.engine.actions import format_action, parse_action
from cardtable.engine.cards import card_texts
from cardtable.engine.errors import EngineError, InvalidInput
from cardtable.engine.facts import DealScored, Fact, TrickWon
from cardtable.engine.game import GameSpec, GameState
from cardtable.engine.options import options_to_dict
from cardtable.engine.registry import game_spec
from cardtable.engine.replay import ActionInput, DealInput, GameInput, apply_input
from cardtable.engine.snapshot import cards_from_json

RECORD_FORMAT = "cardtable-game-record"
RECORD_VERSION = 1
#: Bounds that keep a hostile record from exhausting memory or time.
MAX_DEALS = 500
MAX_ACTIONS_PER_DEAL = 2_000


# -- writing ------------------------------------------------------------------------------
@dataclass
class RecordBuilder:
    """Collects a game's inputs and results as they happen, then writes the record."""

    state: GameState
    seats: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    deals: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        spec: GameSpec,
        players: int,
        options: Mapping[str, Any] | Any,
        first_dealer: int,
        seats: Sequence[Mapping[str, Any]] | None = None,
    ) -> RecordBuilder:
        state = spec.new_game(players, options, first_dealer)
        seat_list = (
            [dict(seat) for seat in seats] if seats else [{"seat": seat} for seat in range(players)]
        )
        return cls(state=state, seats=seat_list)

    def deal(self, order: Sequence[int], shuffle: Mapping[str, str] | None = None) -> list[Fact]:
        """Deal from ``order`` and open a new deal entry (with its shuffle proof, if any)."""
        facts = self.state.deal(order)
        entry: dict[str, Any] = {
            "number": self.state.deal_number,
            "dealer": self.state.dealer,
            "deck": card_texts(order),
            "actions": [],
            "tricks": [],
            "scores": None,
        }
        if shuffle:
            entry["shuffle"] = dict(shuffle)
        self.deals.append(entry)
        self._note_results(facts)
        return facts

    def act(self, seat: int, action_text: str) -> list[Fact]:
        """Apply one action and add it to the current deal entry."""
        action = parse_action(action_text)
        facts = self.state.apply(seat, action)
        self.deals[-1]["actions"].append({"seat": seat, "action": format_action(action)})
        self._note_results(facts)
        return facts

    def _note_results(self, facts: Sequence[Fact]) -> None:
        entry = self.deals[-1]
        for fact in facts:
            if isinstance(fact, TrickWon):
                entry["tricks"].append(
                    {"leader": fact.leader, "winner": fact.seat, "cards": card_texts(fact.cards)}
                )
            elif isinstance(fact, DealScored):
                entry["scores"] = list(fact.scores)
                entry["totals"] = list(fact.totals)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict."""
        state = self.state
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "game": state.spec.name,
            "players": state.num_players,
            "options": options_to_dict(state.options),
            "first_dealer": state.first_dealer,
            "seats": self.seats,
            **self.extra,
            "deals": self.deals,
            "result": {
                "over": state.is_over(),
                "totals": list(state.totals),
                "places": list(state.places() or []),
            },
        }


def dumps_record(record: Mapping[str, Any]) -> str:
    """The record as JSON laid out for people: one deal field, trick or action per line.

    Lists of plain values (a deck, scores) stay on one line; lists of objects (actions,
    tricks) put one object per line. Any JSON reader reads it; a person can scan it.
    """
    return _layout(record, 0) + "\n"


def _layout(value: Any, depth: int) -> str:
    pad, inner = "  " * depth, "  " * (depth + 1)
    inline = json.dumps(value, ensure_ascii=False)
    fits = depth > 0 and len(inline) + len(inner) <= 100
    if isinstance(value, Mapping) and value and not fits:
        items = [
            f"{inner}{json.dumps(key)}: {_layout(item, depth + 1)}" for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(item, Mapping) for item in value) and not fits:
        items = [f"{inner}{_layout(item, depth + 1)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return inline


# -- reading ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordedDeal:
    number: int
    deck: tuple[int, ...]
    actions: tuple[tuple[int, str], ...]
    tricks: tuple[Mapping[str, Any], ...]
    scores: tuple[int, ...] | None
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class GameRecord:
    """A record read and checked for shape (not yet for rules: see :func:`verify_record`)."""

    spec: GameSpec
    players: int
    options: Mapping[str, Any]
    first_dealer: int
    deals: tuple[RecordedDeal, ...]
    result: Mapping[str, Any]
    raw: Mapping[str, Any]

    def inputs(self) -> Iterator[tuple[int, int, GameInput]]:
        """``(deal index, action index or -1 for the deal, input)`` in game order."""
        for deal_index, deal in enumerate(self.deals):
            yield deal_index, -1, DealInput(deal.deck)
            for action_index, (seat, text) in enumerate(deal.actions):
                yield deal_index, action_index, ActionInput(seat, parse_action(text))


def upgrade_record(data: Mapping[str, Any]) -> dict[str, Any]:
    """The record in the current version's shape.

    Version 0 was the engine's first draft: the same document with ``"moves"`` instead of
    ``"actions"`` in each deal, each move a ``"SEAT ACTION"`` string. Upgrading here keeps
    those records readable by every tool.
    """
    if not isinstance(data, Mapping):
        raise InvalidInput("a record must be a JSON object")
    if data.get("format") != RECORD_FORMAT:
        raise InvalidInput(f"not a game record: 'format' must be {RECORD_FORMAT!r}")
    version = data.get("version")
    if version == RECORD_VERSION:
        return dict(data)
    if version == 0:
        upgraded = dict(data)
        deals = []
        for deal in _require_list(data, "deals", MAX_DEALS):
            if not isinstance(deal, Mapping):
                raise InvalidInput("each deal must be an object")
            moves = _require_list(deal, "moves", MAX_ACTIONS_PER_DEAL)
            actions = []
            for move in moves:
                seat_text, _, action = str(move).partition(" ")
                if not seat_text.isdigit():
                    raise InvalidInput(f"cannot read move {move!r}")
                actions.append({"seat": int(seat_text), "action": action})
            deals.append({**{k: v for k, v in deal.items() if k != "moves"}, "actions": actions})
        upgraded.update(version=RECORD_VERSION, deals=deals)
        return upgraded
    raise InvalidInput(f"record version {version!r} is not supported (newest: {RECORD_VERSION})")


def load_record(data: Mapping[str, Any]) -> GameRecord:
    """Read a record (any supported version) and check its shape; raises InvalidInput."""
    current = upgrade_record(data)
    spec = game_spec(str(current.get("game", "")))
    players = current.get("players")
    if not isinstance(players, int) or not spec.min_players <= players <= spec.max_players:
        raise InvalidInput(f"record field 'players' is not a valid player count for {spec.title}")
    first_dealer = current.get("first_dealer")
    if not isinstance(first_dealer, int) or not 0 <= first_dealer < players:
        raise InvalidInput("record field 'first_dealer' must be a seat")
    options = current.get("options", {})
    if not isinstance(options, Mapping):
        raise InvalidInput("record field 'options' must be an object")
    deals = tuple(
        _load_deal(index, deal, players)
        for index, deal in enumerate(_require_list(current, "deals", MAX_DEALS))
    )
    result = current.get("result", {})
    if not isinstance(result, Mapping):
        raise InvalidInput("record field 'result' must be an object")
    return GameRecord(spec, players, options, first_dealer, deals, result, current)


def _require_list(data: Mapping[str, Any], key: str, max_len: int) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) > max_len:
        raise InvalidInput(f"record field {key!r} must be a list of at most {max_len} items")
    return value


def _load_deal(index: int, deal: Any, players: int) -> RecordedDeal:
    where = f"deal {index + 1}"
    if not isinstance(deal, Mapping):
        raise InvalidInput(f"{where} must be an object")
    deck = tuple(cards_from_json(deal.get("deck"), f"{where} deck"))
    actions = []
    for position, entry in enumerate(_require_list(deal, "actions", MAX_ACTIONS_PER_DEAL)):
        seat = entry.get("seat") if isinstance(entry, Mapping) else None
        text = entry.get("action") if isinstance(entry, Mapping) else None
        if not isinstance(seat, int) or not isinstance(text, str) or not 0 <= seat < players:
            raise InvalidInput(f"{where}, action {position + 1}: needs a seat and an action")
        actions.append((seat, text))
    tricks_data = deal.get("tricks") or []
    if not isinstance(tricks_data, list):
        raise InvalidInput(f"{where}: tricks must be a list")
    tricks = tuple(tricks_data)
    scores_data = deal.get("scores")
    scores: tuple[int, ...] | None = None
    if scores_data is not None:
        if not isinstance(scores_data, list) or not all(isinstance(s, int) for s in scores_data):
            raise InvalidInput(f"{where}: scores must be a list of whole numbers")
        scores = tuple(scores_data)
    number = deal.get("number", index + 1)
    return RecordedDeal(
        number if isinstance(number, int) else index + 1,
        deck,
        tuple(actions),
        tricks,
        scores,
        deal,
    )


# -- verifying ----------------------------------------------------------------------------
@dataclass
class Verification:
    """The outcome of replaying a record: per-deal scores, and the first problem if any."""

    deal_scores: list[tuple[int, tuple[int, ...] | None]] = field(default_factory=list)
    totals: tuple[int, ...] = ()
    places: tuple[int, ...] = ()
    over: bool = False
    problem: str | None = None
    problem_deal: int | None = None
    problem_action: str | None = None
    #: The record could not be compared at all (a result of the wrong shape, say).
    malformed: bool = False

    @property
    def ok(self) -> bool:
        return self.problem is None


def verify_record(record: GameRecord) -> Verification:
    """Replay every input and compare every recorded result with the engine's.

    Never raises for a bad record: whatever is wrong (an unreadable action, a result of the
    wrong shape) becomes the report's problem.
    """
    try:
        return _verify(record)
    except (EngineError, TypeError, KeyError, ValueError, AttributeError) as error:
        report = Verification(malformed=True)
        report.problem = f"the record is malformed: {error}"
        return report


def _verify(record: GameRecord) -> Verification:
    report = Verification()
    state = record.spec.new_game(record.players, record.options, record.first_dealer)
    current_deal: RecordedDeal | None = None
    tricks: list[TrickWon] = []
    scored: DealScored | None = None

    def fail(reason: str, deal: RecordedDeal | None, action: str | None = None) -> Verification:
        report.problem = reason
        report.problem_deal = deal.number if deal else None
        report.problem_action = action
        return report

    for deal_index, action_index, step in record.inputs():
        deal = record.deals[deal_index]
        if action_index == -1:
            if current_deal is not None:
                problem = _compare_deal(current_deal, tricks, scored)
                if problem:
                    return fail(problem, current_deal)
                report.deal_scores.append((current_deal.number, scored.scores if scored else None))
            current_deal, tricks, scored = deal, [], None
        label = (
            "the deal"
            if action_index == -1
            else f"action {action_index + 1} (seat {deal.actions[action_index][0]}: "
            f"{deal.actions[action_index][1]})"
        )
        try:
            facts = apply_input(state, step)
        except EngineError as error:
            return fail(str(error), deal, label)
        for fact in facts:
            if isinstance(fact, TrickWon):
                tricks.append(fact)
            elif isinstance(fact, DealScored):
                scored = fact
    if current_deal is not None:
        problem = _compare_deal(current_deal, tricks, scored)
        if problem:
            return fail(problem, current_deal)
        report.deal_scores.append((current_deal.number, scored.scores if scored else None))
    report.totals = tuple(state.totals)
    report.places = tuple(state.places() or ())
    report.over = state.is_over()
    recorded = record.result
    if recorded.get("totals") and list(recorded["totals"]) != list(state.totals):
        return fail(
            f"the recorded totals {list(recorded['totals'])} differ from the engine's "
            f"{list(state.totals)}",
            None,
        )
    if recorded.get("ended_early"):
        # The table ended the game under a seat rule (Whist: everyone else left): the engine's
        # game is unfinished by design, and the places are the table's, not the totals'. The
        # record does not say who left, so what can be checked is the rule's shape: a game
        # that has the rule, not over in the engine, one first place and every other second.
        problem = _early_end_problem(record, state, recorded)
        if problem:
            return fail(problem, None)
        report.over = True
        report.places = tuple(recorded["places"])
        return report
    if recorded.get("places") and list(recorded["places"]) != list(report.places):
        return fail(
            f"the recorded places {list(recorded['places'])} differ from the engine's "
            f"{list(report.places)}",
            None,
        )
    if bool(recorded.get("over", False)) != state.is_over():
        return fail("the record says the game is over but the engine does not agree", None)
    return report


#: The ways a table may end a game before the engine does: the texts of ``GameFinished.end_reason``
#: (docs/events.md) that a record's ``result.ended_early`` holds.
EARLY_ENDS = {"everyone_else_left"}


def _early_end_problem(record: GameRecord, state: GameState, recorded: Mapping[str, Any]) -> str:
    """Why a result marked ``ended_early`` cannot be one, or "" when its shape is right."""
    reason = recorded["ended_early"]
    if reason not in EARLY_ENDS or not record.spec.ends_when_one_person_remains:
        return (
            f"the record says the game ended early ({reason!r}), which {record.spec.name} "
            "has no rule for"
        )
    if state.is_over():
        return "the record says the game ended early, but the engine played it to its end"
    places = list(recorded.get("places", ()))
    if len(places) != record.players or sorted(places) != [1] + [2] * (record.players - 1):
        return (
            f"the recorded places {places} are not those of a game ended because everyone "
            "else left (the one person left first, every other seat second)"
        )
    if not recorded.get("over", False):
        return "the record says the game ended early but not that it is over"
    return ""


def _compare_deal(
    deal: RecordedDeal, tricks: Sequence[TrickWon], scored: DealScored | None
) -> str | None:
    """The first difference between a recorded deal's results and the engine's, if any."""
    recorded_tricks = list(deal.tricks)
    if recorded_tricks and len(recorded_tricks) != len(tricks):
        return f"the record has {len(recorded_tricks)} tricks but {len(tricks)} were played"
    for number, (recorded, actual) in enumerate(zip(recorded_tricks, tricks, strict=False), 1):
        if not isinstance(recorded, Mapping):
            return f"trick {number} is not an object"
        if recorded.get("winner") != actual.seat:
            return (
                f"trick {number} is recorded as won by seat {recorded.get('winner')}, "
                f"but seat {actual.seat} wins it"
            )
        if list(recorded.get("cards", [])) != card_texts(actual.cards):
            return f"trick {number} records cards {recorded.get('cards')}"
    engine_scores = scored.scores if scored else None
    if deal.scores is not None and deal.scores != engine_scores:
        shown = list(engine_scores) if engine_scores is not None else None
        return f"the recorded scores {list(deal.scores)} differ from the engine's {shown}"
    return None
