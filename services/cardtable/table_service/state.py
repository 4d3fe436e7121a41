"""A table's state as the fold of its events, by small pure functions.

The fold knows no card: it keeps the lobby (seats, who holds them, status), the game's
inputs (deck orders and actions, replayed by the rules service when a table is rebuilt from
its log), the fair-deal seeds, the turn timer, and the command ids already applied. The game
state itself (hidden cards, whose turn it is) is the rules service's: see ``Table``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cardtable.platform.rated_tables import table_is_rated
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.rules.v1 import rules_pb2

OPEN, RUNNING, FINISHED = "open", "running", "finished"
PERSON = events_pb2.PLAYER_KIND_PERSON
BOT = events_pb2.PLAYER_KIND_BOT


@dataclass
class Seat:
    """One seat: who plays it now, and the person who owns it while a computer plays for them."""

    player_id: str = ""
    kind: int = events_pb2.PLAYER_KIND_UNSPECIFIED
    display_name: str = ""
    #: The person a computer player stands in for after a leave or three timeouts.
    owner_id: str = ""
    consecutive_timeouts: int = 0

    @property
    def empty(self) -> bool:
        return not self.player_id

    @property
    def is_bot(self) -> bool:
        return self.kind == BOT


@dataclass
class DealProof:
    """A deal's fair-deal proof: the commitment, and the seed once known to this fold."""

    commitment: str
    seed: str = ""
    deck_order: tuple[str, ...] = ()
    revealed: bool = False
    #: The sealing key the deal's hidden events are sealed under.
    sealing_key_id: str = ""


@dataclass
class Timer:
    seats: tuple[int, ...]
    deadline: float  # seconds since the epoch
    turn: int


#: One input of the game as the log holds it: ``(seat, action, ())`` for a seat's action,
#: ``(0, "", deck_order)`` for a deal. A plain tuple of strings and ints, which the garbage
#: collector stops tracking (it does not for tuple subclasses such as named tuples), where a
#: ``GameInput`` message is two tracked objects. A table keeps one step per move and the
#: service keeps thousands of tables in memory: as messages, the steps were most of what
#: every full collection walked, and its pauses grew with the load
#: (docs/proving-it.md#settings-the-figures-chose).
GameStep = tuple[int, str, tuple[str, ...]]


def action_step(seat: int, action: str) -> GameStep:
    return (seat, action, ())


def deal_step(deck_order: tuple[str, ...]) -> GameStep:
    return (0, "", deck_order)


def is_deal(step: GameStep) -> bool:
    return bool(step[2])


def step_message(step: GameStep) -> rules_pb2.GameInput:
    """The step as the rules service reads it."""
    seat, action, deck_order = step
    if deck_order:
        return rules_pb2.GameInput(deal=rules_pb2.DeckOrder(cards=deck_order))
    return rules_pb2.GameInput(action=rules_pb2.SeatAction(seat=seat, action=action))


@dataclass
class TableState:
    """Everything the table's events say, folded."""

    table_id: str
    version: int = 0
    #: Stream sequence of the table's last batch: the expected last subject sequence.
    sequence: int = 0
    game: str = ""
    seat_count: int = 0
    options: dict[str, str] = field(default_factory=dict)
    settings: events_pb2.TableSettings = field(default_factory=events_pb2.TableSettings)
    created_by: str = ""
    created_at: float = 0.0
    #: When the game ended (seconds since the epoch); 0 while it has not.
    finished_at: float = 0.0
    rematch_of: str = ""
    rematch_table_id: str = ""
    #: Whether its game moves ratings, as TableCreated recorded it (platform/rated_tables.py).
    rated: bool = False
    status: str = OPEN
    seats: list[Seat] = field(default_factory=list)
    first_dealer: int = 0
    inputs: list[GameStep] = field(default_factory=list)
    deals: dict[int, DealProof] = field(default_factory=dict)
    #: Actions applied so far: each turn has its own number, so a stale timer is harmless.
    turn: int = 0
    timer: Timer | None = None
    totals: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    ended_early: bool = False
    #: The ids of the commands applied, each with its fingerprint (empty when not recorded): a
    #: dict of strings and bytes is one object the garbage collector does not track, where a
    #: set is tracked and walked by every full collection (one per table in memory).
    command_ids: dict[str, bytes] = field(default_factory=dict)
    #: SHA-256 of the table's last stored batch, which the next one must name (log_security).
    last_batch_sha256: bytes = b""
    #: Whether a signed batch has been folded: an unsigned one can no longer follow.
    signed: bool = False
    #: When the last batch was written (seconds since the epoch): how long the replica that
    #: wrote it has had for the work that follows an append (the lobby entry, seat requests).
    last_batch_at: float = 0.0

    @property
    def exists(self) -> bool:
        return self.version > 0

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` plays now, if any."""
        for number, seat in enumerate(self.seats):
            if seat.player_id == player_id:
                return number
        return None

    def owned_seat_of(self, player_id: str) -> int | None:
        """The seat a computer plays for ``player_id`` after they left or timed out."""
        for number, seat in enumerate(self.seats):
            if seat.owner_id == player_id:
                return number
        return None

    def free_seats(self) -> list[int]:
        return [number for number, seat in enumerate(self.seats) if seat.empty]

    def people(self) -> list[int]:
        return [number for number, seat in enumerate(self.seats) if seat.kind == PERSON]


def _timestamp(value: object) -> float:
    seconds = getattr(value, "seconds", 0)
    nanos = getattr(value, "nanos", 0)
    return float(seconds) + float(nanos) / 1e9


def _table_created(state: TableState, event: events_pb2.TableCreated, at: float) -> None:
    state.game = event.game
    state.seat_count = event.seats
    state.options = dict(event.options.values)
    state.settings = event.settings
    state.created_by = event.created_by
    state.created_at = at
    state.rematch_of = event.rematch_of
    state.rated = table_is_rated(event)
    state.seats = [Seat() for _ in range(event.seats)]


def _player_seated(state: TableState, event: events_pb2.PlayerSeated, at: float) -> None:
    state.seats[event.seat] = Seat(event.player_id, event.kind, event.display_name)


def _player_left(state: TableState, event: events_pb2.PlayerLeft, at: float) -> None:
    if state.status == OPEN:
        state.seats[event.seat] = Seat()


def _game_started(state: TableState, event: events_pb2.GameStarted, at: float) -> None:
    state.status = RUNNING
    state.first_dealer = event.first_dealer


def _deal_committed(state: TableState, event: events_pb2.DealCommitted, at: float) -> None:
    state.deals[event.deal_number] = DealProof(
        commitment=event.commitment, sealing_key_id=event.sealing_key_id
    )


def _deal_shuffled(state: TableState, event: events_pb2.DealShuffled, at: float) -> None:
    proof = state.deals.setdefault(event.deal_number, DealProof(commitment=""))
    proof.seed = event.seed
    proof.deck_order = tuple(event.deck_order)
    state.inputs.append(deal_step(tuple(event.deck_order)))


def _deal_seed_revealed(state: TableState, event: events_pb2.DealSeedRevealed, at: float) -> None:
    proof = state.deals.setdefault(event.deal_number, DealProof(commitment=event.commitment))
    proof.seed = event.seed
    proof.revealed = True


def _action_taken(state: TableState, event: events_pb2.ActionTaken, at: float) -> None:
    state.inputs.append(action_step(event.seat, event.action))
    state.turn += 1
    if not event.by_timeout:
        state.seats[event.seat].consecutive_timeouts = 0


def _timer_started(state: TableState, event: events_pb2.TurnTimerStarted, at: float) -> None:
    state.timer = Timer(tuple(event.seats), _timestamp(event.deadline), event.turn)


def _timed_out(state: TableState, event: events_pb2.TurnTimedOut, at: float) -> None:
    state.seats[event.seat].consecutive_timeouts = event.consecutive


def _handed_to_bot(state: TableState, event: events_pb2.SeatHandedToBot, at: float) -> None:
    owner = event.replaced_player_id
    state.seats[event.seat] = Seat(event.player_id, BOT, "computer player", owner_id=owner)


def _reclaimed(state: TableState, event: events_pb2.SeatReclaimed, at: float) -> None:
    state.seats[event.seat] = Seat(event.player_id, PERSON, "")


def _game_finished(state: TableState, event: events_pb2.GameFinished, at: float) -> None:
    state.status = FINISHED
    state.finished_at = at
    state.timer = None
    state.totals = list(event.totals)
    state.places = list(event.places)
    state.ended_early = event.ended_early


def _rematch_created(state: TableState, event: events_pb2.RematchCreated, at: float) -> None:
    state.rematch_table_id = event.new_table_id


def _nothing(state: TableState, event: object, at: float) -> None:
    """Events that change nothing the table decides with (facts, bot requests)."""


_HANDLERS: dict[str, Callable[[TableState, object, float], None]] = {
    "table_created": _table_created,  # type: ignore[dict-item]
    "player_seated": _player_seated,  # type: ignore[dict-item]
    "player_left": _player_left,  # type: ignore[dict-item]
    "game_started": _game_started,  # type: ignore[dict-item]
    "deal_committed": _deal_committed,  # type: ignore[dict-item]
    "deal_shuffled": _deal_shuffled,  # type: ignore[dict-item]
    "deal_seed_revealed": _deal_seed_revealed,  # type: ignore[dict-item]
    "action_taken": _action_taken,  # type: ignore[dict-item]
    "fact_recorded": _nothing,
    "turn_timer_started": _timer_started,  # type: ignore[dict-item]
    "turn_timed_out": _timed_out,  # type: ignore[dict-item]
    "seat_handed_to_bot": _handed_to_bot,  # type: ignore[dict-item]
    "seat_reclaimed": _reclaimed,  # type: ignore[dict-item]
    "bot_seat_requested": _nothing,
    "game_finished": _game_finished,  # type: ignore[dict-item]
    "rematch_created": _rematch_created,  # type: ignore[dict-item]
    # opened before folding (log_security); one that could not be is nothing to fold
    "sealed": _nothing,
}


def apply_batch(
    state: TableState,
    batch: events_pb2.EventBatch,
    sequence: int,
    events: Iterable[events_pb2.Event] | None = None,
) -> TableState:
    """Fold one batch into ``state`` (in place) and return it.

    ``events`` stand in for the batch's own when given: the plain events of a batch whose
    stored copy has them sealed. A batch at or below the state's version is already folded
    in: folding it again would count its moves twice, so it is ignored.
    """
    if batch.table_version and batch.table_version <= state.version:
        return state
    at = _timestamp(batch.occurred_at)
    for event in batch.events if events is None else events:
        which = event.WhichOneof("body")
        if which is None:
            continue  # an event kind this version does not know: nothing to fold
        handler = _HANDLERS.get(which, _nothing)
        handler(state, getattr(event, which), at)
    state.version = batch.table_version
    state.sequence = sequence
    state.last_batch_at = at
    if batch.command_id:
        state.command_ids[batch.command_id] = batch.command_fingerprint
    return state


def visible(event: events_pb2.Event, seat: int | None) -> bool:
    """Whether a viewer at ``seat`` (``None``: spectator) may receive ``event``."""
    audience = event.audience
    if audience.kind == common_pb2.Audience.KIND_PUBLIC:
        return True
    if audience.kind == common_pb2.Audience.KIND_SEATS:
        return seat is not None and seat in audience.seats
    return False
