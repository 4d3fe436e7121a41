"""The fold: decoded event batches applied to the rows of the tables they touch. Pure.

``Projection`` starts from the rows a transaction loaded, applies batches in log order, and
remembers which rows changed and which games finished; the writer then settles the ratings and
stores the changed rows. Nothing here reads a clock or a database, so the same log always gives
the same rows, whether it arrives one batch at a time (live) or in long runs (rebuild).

Events that carry nothing for scoring (actions, timers, shuffles) are skipped. A batch whose
``table_version`` is not above the table's is a duplicate stored twice in the log and changes
nothing. An event that contradicts the table's state raises :class:`PoisonMessageError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from cardtable.engine.errors import InvalidInput
from cardtable.engine.registry import game_spec
from cardtable.platform.event_upcasting import END_TEXTS, end_reason, handover_reason
from cardtable.platform.fact_messages import (
    CONTRACTS,
    PASS_DIRECTIONS,
    TRUMPS,
    FactMessageError,
    text_of,
)
from cardtable.platform.fact_upcasting import FactUpcastError, typed_fact
from cardtable.platform.log_signing import (
    SIGNATURE_HEADER,
    BatchVerifier,
    LogIntegrityError,
    SignedBatch,
    batch_sha256,
    check_next,
    vouched_batches,
)
from cardtable.platform.rated_tables import table_is_rated
from cardtable.scoring_service.messages import DecodedBatch, PoisonMessageError
from cardtable.scoring_service.ratings import FinishedGame, RatedSeat
from cardtable.scoring_service.rows import (
    BOT,
    FINISHED,
    OPEN,
    PERSON,
    RUNNING,
    DealRow,
    DealSeatRow,
    GamePlayerRow,
    GameRow,
    PlayerRow,
    Row,
    SeatRow,
    TableState,
)
from cardtable_api.events.v1 import events_pb2, facts_pb2

HEARTS = "hearts"
#: SeatHandedToBot reasons that count the replaced person as disconnected (docs/rules.md).
DISCONNECTING_REASONS = frozenset(
    {events_pb2.SeatHandedToBot.REASON_LEFT, events_pb2.SeatHandedToBot.REASON_TIMEOUTS}
)
KINDS = {events_pb2.PLAYER_KIND_BOT: BOT, events_pb2.PLAYER_KIND_PERSON: PERSON}
#: The method of :class:`Projection` that folds each kind of event, and each kind of fact,
#: by name. Names, not bound methods kept on the instance: those would make every
#: projection a reference cycle, freed (with every row and key it holds) only by the
#: garbage collector instead of as soon as its transaction is done.
EVENT_HANDLERS = {
    "player_seated": "_player_seated",
    "player_left": "_player_left",
    "game_started": "_game_started",
    "seat_handed_to_bot": "_seat_handed_to_bot",
    "seat_reclaimed": "_seat_reclaimed",
    "game_finished": "_game_finished",
    "rematch_created": "_rematch_created",
    "fact_recorded": "_fact_recorded",
}
FACT_HANDLERS = {
    "deal_started": "_deal_started",
    "bid_made": "_bid_made",
    "trump_chosen": "_trump_chosen",
    "contract_chosen": "_contract_chosen",
    "passing_announced": "_passing_announced",
    "cards_passed": "_cards_passed",
    "deal_thrown_in": "_deal_thrown_in",
    "deal_scored": "_deal_scored",
}


@dataclass(frozen=True)
class VersionGap:
    """Batches missing from a table's subject: the log skipped from ``expected`` to ``found``."""

    table_id: str
    expected: int
    found: int


class Projection:
    """Batches folded onto loaded table states, with a record of every row that changed."""

    def __init__(
        self,
        tables: dict[str, TableState],
        verifier: BatchVerifier | None = None,
        signed_from: int = 1,
    ) -> None:
        self.tables = tables
        #: The table service's public keys: every batch's signature and chain link is checked
        #: before it is folded (platform/log_signing.py). None only for unsigned test logs.
        self.verifier = verifier
        self.signed_from = signed_from
        self.players: dict[str, PlayerRow] = {}
        self.finished: list[FinishedGame] = []
        self.gaps: list[VersionGap] = []
        self._changed: dict[tuple[str, tuple[Any, ...]], Row] = {}
        #: Sequences of batches already authenticated by :meth:`vouch`.
        self._vouched: set[int] = set()

    def vouch(self, batches: Sequence[DecodedBatch]) -> int:
        """Authenticate the batches about to be applied with one signature per table: each
        table's last batch here, verified, vouches for those before it through their chain
        links (``log_signing.vouched_batches``). The rest are verified one by one as they are
        applied. Returns how many signatures need no verification of their own."""
        if self.verifier is None:
            return 0
        by_table: dict[str, list[DecodedBatch]] = {}
        for decoded in batches:
            by_table.setdefault(decoded.table_id, []).append(decoded)
        spared = 0
        for group in by_table.values():
            chain = [SignedBatch(d.payload, d.headers, d.batch) for d in group]
            count = vouched_batches(self.verifier, chain)
            self._vouched.update(decoded.sequence for decoded in group[len(group) - count :])
            spared += max(count - 1, 0)
        return spared

    # -- what changed ----------------------------------------------------------------------
    def changed(self) -> Iterator[Row]:
        """Every row created or changed, each once, in the order first touched."""
        yield from self._changed.values()

    def touch(self, row: Row) -> None:
        """Record that ``row`` must be written."""
        self._changed[(row.TABLE, row.key())] = row

    # -- batches ---------------------------------------------------------------------------
    def apply(self, decoded: DecodedBatch) -> bool:
        """Fold one batch; ``False`` when it is a duplicate already folded."""
        batch = decoded.batch
        moment = decoded  # where the batch sits in the log, and when it happened
        state = self.tables.get(decoded.table_id)
        if state is not None and batch.table_version <= state.game.table_version:
            return False
        if self.verifier is not None:
            self._verify(decoded, state)
        events = list(batch.events)
        if state is None:
            if not events or events[0].WhichOneof("body") != "table_created":
                raise PoisonMessageError(
                    f"table {decoded.table_id} has no TableCreated before this batch"
                )
            state = self._table_created(decoded.table_id, events.pop(0).table_created, moment)
        elif batch.table_version != state.game.table_version + 1:
            self.gaps.append(
                VersionGap(decoded.table_id, state.game.table_version + 1, batch.table_version)
            )
        for event in events:
            body = event.WhichOneof("body")
            if body == "table_created":
                raise PoisonMessageError(f"table {decoded.table_id} was already created")
            handler = EVENT_HANDLERS.get(body or "")
            if handler is not None:
                getattr(self, handler)(state, getattr(event, body or ""), moment)
        state.game.table_version = batch.table_version
        if self.verifier is not None:
            state.game.last_batch_sha256 = batch_sha256(decoded.payload)
            state.game.signed = state.game.signed or SIGNATURE_HEADER in decoded.headers
        self.touch(state.game)
        return True

    def _verify(self, decoded: DecodedBatch, state: TableState | None) -> None:
        """A batch that is forged, altered or out of its table's chain is poison: it is
        dead-lettered with the reason, and so is every later batch of that table."""
        assert self.verifier is not None
        try:
            check_next(
                self.verifier,
                decoded.payload,
                decoded.headers,
                decoded.sequence,
                decoded.batch,
                last_sha256=state.game.last_batch_sha256 if state else b"",
                last_version=state.game.table_version if state else 0,
                signed_before=state.game.signed if state else False,
                signed_from=self.signed_from,
                vouched=decoded.sequence in self._vouched,
            )
        except LogIntegrityError as error:
            raise PoisonMessageError(f"the batch failed verification: {error}") from None

    # -- the table and its seats -----------------------------------------------------------
    def _table_created(
        self, table_id: str, created: events_pb2.TableCreated, moment: DecodedBatch
    ) -> TableState:
        try:
            spec = game_spec(created.game)
        except InvalidInput as error:
            raise PoisonMessageError(str(error)) from None
        if not spec.min_players <= created.seats <= spec.max_players:
            raise PoisonMessageError(f"{spec.title} is not played by {created.seats}")
        settings = json_format.MessageToDict(created.settings, preserving_proto_field_name=True)
        game = GameRow(
            table_id=table_id,
            game=spec.name,
            seats=created.seats,
            options=json.dumps(dict(created.options.values), sort_keys=True),
            settings=json.dumps(settings, sort_keys=True),
            created_by=created.created_by,
            rematch_of=created.rematch_of,
            rematch_table_id="",
            status=OPEN,
            game_number=0,
            first_dealer=None,
            deal_number=0,
            ended_early=False,
            end_reason="",
            table_version=0,
            created_at=moment.occurred_at,
            started_at=None,
            finished_at=None,
            started_sequence=None,
            finished_sequence=None,
            rated=table_is_rated(created),
        )
        seats = {seat: SeatRow(table_id, seat, None, None) for seat in range(created.seats)}
        state = TableState(game=game, seats=seats)
        self.tables[table_id] = state
        self.touch(game)
        for row in seats.values():
            self.touch(row)
        return state

    def _seat(self, state: TableState, seat: int) -> SeatRow:
        row = state.seats.get(seat)
        if row is None:
            raise PoisonMessageError(f"there is no seat {seat} at table {state.game.table_id}")
        return row

    def _sit(self, state: TableState, seat: int, player_id: str | None, kind: str | None) -> None:
        row = self._seat(state, seat)
        row.player_id, row.kind = player_id, kind
        self.touch(row)

    def _see_player(
        self, player_id: str, kind: str, display_name: str, moment: DecodedBatch
    ) -> None:
        """Remember a player; the newest non-empty name wins, the first sighting stays."""
        known = self.players.get(player_id)
        if known is None:
            self.players[player_id] = PlayerRow(player_id, kind, display_name, moment.occurred_at)
            return
        known.kind = kind
        if display_name:
            known.display_name = display_name

    def _player_seated(
        self, state: TableState, seated: events_pb2.PlayerSeated, moment: DecodedBatch
    ) -> None:
        kind = KINDS.get(seated.kind, PERSON)
        self._sit(state, seated.seat, seated.player_id, kind)
        self._see_player(seated.player_id, kind, seated.display_name, moment)

    def _player_left(
        self, state: TableState, left: events_pb2.PlayerLeft, moment: DecodedBatch
    ) -> None:
        seat = self._seat(state, left.seat)
        if seat.player_id == left.player_id:
            self._sit(state, left.seat, None, None)
        if left.disconnected:
            self._disconnect(state, left.seat, left.player_id, left.progress)

    def _seat_handed_to_bot(
        self, state: TableState, handed: events_pb2.SeatHandedToBot, moment: DecodedBatch
    ) -> None:
        self._sit(state, handed.seat, handed.player_id, BOT)
        self._see_player(handed.player_id, BOT, "", moment)
        if handover_reason(handed) in DISCONNECTING_REASONS:
            self._disconnect(state, handed.seat, handed.replaced_player_id, handed.progress)

    def _seat_reclaimed(
        self, state: TableState, reclaimed: events_pb2.SeatReclaimed, moment: DecodedBatch
    ) -> None:
        self._sit(state, reclaimed.seat, reclaimed.player_id, PERSON)
        rated = state.rated.get(reclaimed.seat)
        if rated is not None and rated.player_id == reclaimed.player_id:
            rated.left_progress = None  # docs/rules.md: no longer counted as disconnected
            self.touch(rated)

    def _disconnect(self, state: TableState, seat: int, player_id: str, progress: float) -> None:
        """Count the seat's rated player as disconnected from ``progress`` on (docs/rules.md)."""
        rated = state.rated.get(seat)
        if state.game.status != RUNNING or rated is None:
            return  # leaving an open table or a finished game costs nothing
        if player_id and rated.player_id != player_id:
            return  # a bot playing a leaver's seat left: the leaver is counted already
        if not (math.isfinite(progress) and 0.0 <= progress <= 1.0):
            raise PoisonMessageError(f"progress {progress!r} is not a share between 0 and 1")
        if rated.left_progress is None:
            rated.left_progress = progress
            self.touch(rated)

    # -- the game --------------------------------------------------------------------------
    def _game_started(
        self, state: TableState, started: events_pb2.GameStarted, moment: DecodedBatch
    ) -> None:
        game = state.game
        if game.status != OPEN:
            raise PoisonMessageError(f"table {game.table_id} started a game twice")
        player_ids = list(started.player_ids)
        if len(player_ids) != game.seats or not all(player_ids):
            raise PoisonMessageError(
                f"GameStarted names {len(player_ids)} players for {game.seats} seats"
            )
        if not 0 <= started.first_dealer < game.seats:
            raise PoisonMessageError(f"first dealer {started.first_dealer} is not a seat")
        game.status = RUNNING
        game.first_dealer = started.first_dealer
        game.game_number = started.game_number
        game.started_at = moment.occurred_at
        game.started_sequence = moment.sequence
        for seat, player_id in enumerate(player_ids):
            row = state.seats[seat]
            kind = row.kind if row.player_id == player_id and row.kind else PERSON
            if row.player_id != player_id:
                self._sit(state, seat, player_id, kind)
            rated = GamePlayerRow(game.table_id, seat, player_id, kind)
            state.rated[seat] = rated
            self.touch(rated)

    def _game_finished(
        self, state: TableState, finished: events_pb2.GameFinished, moment: DecodedBatch
    ) -> None:
        game = state.game
        if game.status != RUNNING:
            raise PoisonMessageError(f"table {game.table_id} finished a game that was not running")
        totals, places = tuple(finished.totals), tuple(finished.places)
        if len(totals) != game.seats or len(places) != game.seats:
            raise PoisonMessageError("GameFinished must give a total and a place for every seat")
        game.status = FINISHED
        game.finished_at = moment.occurred_at
        game.finished_sequence = moment.sequence
        game.ended_early = finished.ended_early
        # kept as text: the rows, the ratings and the scoring API name the rule so
        game.end_reason = END_TEXTS.get(end_reason(finished), "")
        rated_seats = []
        for seat in range(game.seats):
            rated = state.rated[seat]
            rated.total, rated.place = totals[seat], places[seat]
            self.touch(rated)
            rated_seats.append(RatedSeat(rated.player_id, rated.kind, rated.left_progress))
        self.finished.append(
            FinishedGame(
                table_id=game.table_id,
                game=game.game,
                sequence=moment.sequence,
                at=moment.occurred_at,
                totals=totals,
                seats=tuple(rated_seats),
                ended_early=finished.ended_early,
                end_reason=game.end_reason,
                rated=game.rated,
            )
        )

    def _rematch_created(
        self, state: TableState, rematch: events_pb2.RematchCreated, moment: DecodedBatch
    ) -> None:
        state.game.rematch_table_id = rematch.new_table_id

    # -- deals, from the rules service's facts ---------------------------------------------
    def _fact_recorded(
        self, state: TableState, recorded: events_pb2.FactRecorded, moment: DecodedBatch
    ) -> None:
        try:
            typed = typed_fact(recorded)
        except FactUpcastError as error:
            raise PoisonMessageError(str(error)) from None
        which = typed.WhichOneof("body")
        if which is None or which not in FACT_HANDLERS:
            return
        handler = FACT_HANDLERS[which]
        if state.game.status != RUNNING:
            raise PoisonMessageError(
                f"{which} at table {state.game.table_id}, which is not playing"
            )
        getattr(self, handler)(state, getattr(typed, which), moment)

    def _current_deal(self, state: TableState) -> DealRow:
        """The deal being played; a fact about a deal already scored has no place."""
        if state.deal is None or state.deal.scored_at is not None:
            raise PoisonMessageError(f"table {state.game.table_id} has no deal in play")
        return state.deal

    def _deal_changed(self, state: TableState, deal: DealRow) -> None:
        bids = [state.deal_seats[seat].bid for seat in sorted(state.deal_seats)]
        deal.contract = describe_deal(state.game.game, deal, bids)
        self.touch(deal)

    def _deal_seat(self, state: TableState, seat: int) -> DealSeatRow:
        row = state.deal_seats.get(seat)
        if row is None:
            raise PoisonMessageError(f"there is no seat {seat} at table {state.game.table_id}")
        return row

    def _deal_started(
        self, state: TableState, fact: facts_pb2.DealStarted, moment: DecodedBatch
    ) -> None:
        game = state.game
        if fact.deal_number <= game.deal_number:
            raise PoisonMessageError(f"deal {fact.deal_number} follows deal {game.deal_number}")
        game.deal_number = fact.deal_number
        deal = DealRow(
            table_id=game.table_id,
            deal_number=fact.deal_number,
            dealer=fact.dealer,
            cards_each=fact.cards_each,
            trump=None,
            declarer=None,
            chosen_contract=None,
            passing=None,
            thrown_in=False,
            contract="",
            started_at=moment.occurred_at,
            scored_at=None,
        )
        state.deal = deal
        state.deal_seats = {
            seat: DealSeatRow(game.table_id, fact.deal_number, seat) for seat in range(game.seats)
        }
        self.touch(deal)
        for row in state.deal_seats.values():
            self.touch(row)
        self._deal_changed(state, deal)

    def _bid_made(self, state: TableState, fact: facts_pb2.BidMade, moment: DecodedBatch) -> None:
        deal = self._current_deal(state)
        row = self._deal_seat(state, fact.seat)
        row.bid = fact.tricks
        self.touch(row)
        self._deal_changed(state, deal)

    def _trump_chosen(
        self, state: TableState, fact: facts_pb2.TrumpChosen, moment: DecodedBatch
    ) -> None:
        deal = self._current_deal(state)
        deal.trump = _text(TRUMPS, fact.trump, "trump")
        deal.declarer = fact.seat if fact.HasField("seat") else None
        self._deal_changed(state, deal)

    def _contract_chosen(
        self, state: TableState, fact: facts_pb2.ContractChosen, moment: DecodedBatch
    ) -> None:
        deal = self._current_deal(state)
        deal.declarer = fact.seat
        deal.chosen_contract = _text(CONTRACTS, fact.contract, "contract")
        self._deal_changed(state, deal)

    def _passing_announced(
        self, state: TableState, fact: facts_pb2.PassingAnnounced, moment: DecodedBatch
    ) -> None:
        deal = self._current_deal(state)
        deal.passing = _text(PASS_DIRECTIONS, fact.direction, "pass direction")
        self._deal_changed(state, deal)

    def _cards_passed(
        self, state: TableState, fact: facts_pb2.CardsPassed, moment: DecodedBatch
    ) -> None:
        """Logs written before sealing: the direction from the first pass (now it is
        ``PassingAnnounced``, as the passes are sealed)."""
        deal = self._current_deal(state)
        if deal.passing is None:
            offset = (fact.to_seat - fact.seat) % state.game.seats
            deal.passing = {1: "left", state.game.seats - 1: "right"}.get(offset, "across")
            self._deal_changed(state, deal)

    def _deal_thrown_in(
        self, state: TableState, fact: facts_pb2.DealThrownIn, moment: DecodedBatch
    ) -> None:
        deal = self._current_deal(state)
        deal.thrown_in = True
        self._deal_changed(state, deal)

    def _deal_scored(
        self, state: TableState, fact: facts_pb2.DealScored, moment: DecodedBatch
    ) -> None:
        deal = self._current_deal(state)
        if fact.deal_number != deal.deal_number:
            raise PoisonMessageError(
                f"deal {fact.deal_number} scored during deal {deal.deal_number}"
            )
        scores, totals = list(fact.scores), list(fact.totals)
        if len(scores) != state.game.seats or len(totals) != state.game.seats:
            raise PoisonMessageError("DealScored must give a score and a total for every seat")
        for seat, row in state.deal_seats.items():
            row.score, row.total = scores[seat], totals[seat]
            self.touch(row)
        deal.scored_at = moment.occurred_at
        self._deal_changed(state, deal)


def _text(table: dict[str, int], value: int, what: str) -> str:
    """The text a row holds for an enum value of a fact (the engine's, as rows always held)."""
    try:
        return text_of(table, value, what)
    except FactMessageError as error:
        raise PoisonMessageError(str(error)) from None


def describe_deal(game: str, deal: DealRow, bids: list[int | None]) -> str:
    """The deal's contract in words, from what its facts said.

    >>> deal = DealRow("t", 1, 0, 5, "H", None, None, None, False, "", None, None)
    >>> describe_deal("whist", deal, [1, 0, 2, None])
    'bids 1 0 2 -, trump H'
    """
    if deal.thrown_in:
        return "thrown in"
    if deal.chosen_contract is not None:
        return f"contract {deal.chosen_contract} by {deal.declarer}"
    parts = []
    if any(bid is not None for bid in bids):
        parts.append("bids " + " ".join("-" if bid is None else str(bid) for bid in bids))
    if deal.trump is not None:
        trump = f"trump {deal.trump}" if deal.trump else "no trump"
        parts.append(trump if deal.declarer is None else f"{trump} by {deal.declarer}")
    if deal.passing is not None:
        parts.append(f"pass {deal.passing}")
    elif game == HEARTS and deal.scored_at is not None:
        parts.append("no pass")
    return ", ".join(parts)
