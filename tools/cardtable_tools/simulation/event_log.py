"""Event logs of whole games, written as the table service writes them (docs/events.md).

``TableLog`` stands in for the table service where it is not running (the scoring tests, the
scoring benchmark). It plays a game with the engine in-process (random legal moves, fair-deal
seeds) and records each command's events as one ``EventBatch``: the deal's ``DealCommitted``,
``DealShuffled`` and facts; each move's ``ActionTaken`` and facts, ``DealSeedRevealed`` when the
move ended a deal and ``GameFinished`` when it ended the game; leaves, hand-overs to bots and
reclaims when a scenario asks for them. It holds no game rule: whatever the engine says is what
gets written.

    log = TableLog("whist", people("ann", "bob", "cy"), seed=1)
    log.open_and_start()
    log.play_deals(3)
    log.leave(seat=1)
    log.play_to_end()

Logs of many thousands of games (the scoring benchmark) would take long to play one by one:
``table_template`` keeps a played table with marks in place of its ids, and
``interleave_copies`` re-emits a pool of them under new table ids and players, interleaved as
concurrent tables append. A copy's messages are byte for byte what the table service would
have written for that game, so projecting it costs exactly what projecting a fresh game does.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf import timestamp_pb2

from cardtable.bots.random_play import random_action
from cardtable.engine.actions import action_audience, format_action
from cardtable.engine.cards import card_texts
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.game import GameState
from cardtable.engine.ranking import places_from_totals
from cardtable.engine.registry import game_spec
from cardtable.engine.shuffle import SEED_BYTES, commitment, deck_order_from_seed
from cardtable.platform.event_upcasting import with_text
from cardtable.platform.fact_messages import audience_message, fact_event
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

PUBLIC = common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC)
SERVER_ONLY = common_pb2.Audience(kind=common_pb2.Audience.KIND_SERVER_ONLY)
PERSON = events_pb2.PLAYER_KIND_PERSON
BOT = events_pb2.PLAYER_KIND_BOT
EPOCH = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Player:
    """Who takes a seat."""

    player_id: str
    kind: events_pb2.PlayerKind.ValueType = PERSON
    display_name: str = ""


def people(*names: str) -> list[Player]:
    """People called ``names`` (their ids too)."""
    return [Player(name, PERSON, name.title()) for name in names]


def bot(name: str) -> Player:
    """A bot called ``name`` (bots have no display name)."""
    return Player(name, BOT, "")


def public(**body: Any) -> events_pb2.Event:
    """An event everyone may see."""
    return events_pb2.Event(audience=PUBLIC, **body)


class TableLog:
    """One table's event batches, in the order the table service would append them."""

    def __init__(
        self,
        game: str,
        players: Sequence[Player],
        *,
        seed: int = 0,
        options: dict[str, str] | None = None,
        table_id: str | None = None,
        start: datetime = EPOCH,
        rated: bool | None = None,
    ) -> None:
        """``rated``: the table service's decision in ``TableCreated.rated``; None writes the
        event as logs from before the field hold it."""
        self.spec = game_spec(game)
        self.rated = rated
        self.players = list(players)
        self.options = dict(options or {})
        self.rng = random.Random(seed)
        self.table_id = table_id or str(uuid.uuid4())
        self.batches: list[events_pb2.EventBatch] = []
        self.state: GameState | None = None
        # Who plays each seat now (a bot after a leave), and the seats' display names.
        self.occupant = [player.player_id for player in self.players]
        self._clock = start
        self._seed = b""  # the deal in play's seed, revealed when it ends

    # -- writing batches -------------------------------------------------------------------
    def append(self, *events: events_pb2.Event) -> events_pb2.EventBatch:
        """One command's events as the next batch on the subject."""
        self._clock += timedelta(milliseconds=self.rng.randint(5, 900))
        occurred_at = timestamp_pb2.Timestamp()
        occurred_at.FromDatetime(self._clock)
        version = len(self.batches) + 1
        batch = events_pb2.EventBatch(
            schema_version=1,
            table_id=self.table_id,
            command_id=f"{self.table_id}/{version}",
            occurred_at=occurred_at,
            events=list(events),
            table_version=version,
        )
        self.batches.append(batch)
        return batch

    @staticmethod
    def facts(facts: Sequence[Fact]) -> list[events_pb2.Event]:
        return [fact_event(fact) for fact in facts]

    # -- the lobby -------------------------------------------------------------------------
    def open(self) -> None:
        """TableCreated, then each player takes their seat in a command of their own."""
        created = events_pb2.TableCreated(
            game=self.spec.name,
            seats=len(self.players),
            options=common_pb2.GameOptions(values=self.options),
            settings=events_pb2.TableSettings(turn_timer_ms=30_000, fill_with_bots=True),
            created_by=self.players[0].player_id,
        )
        if self.rated is not None:
            created.rated = self.rated
        self.append(public(table_created=created))
        for seat, player in enumerate(self.players):
            self.append(
                public(
                    player_seated=events_pb2.PlayerSeated(
                        seat=seat,
                        player_id=player.player_id,
                        kind=player.kind,
                        display_name=player.display_name,
                    )
                )
            )

    def start(self) -> None:
        first_dealer = self.rng.randrange(len(self.players))
        self.state = self.spec.new_game(len(self.players), self.options, first_dealer)
        self.append(
            public(
                game_started=events_pb2.GameStarted(
                    first_dealer=first_dealer,
                    player_ids=[player.player_id for player in self.players],
                    game_number=1,
                )
            )
        )

    def open_and_start(self) -> None:
        self.open()
        self.start()

    # -- playing ---------------------------------------------------------------------------
    @property
    def game(self) -> GameState:
        assert self.state is not None, "start the game first"
        return self.state

    def _deal(self) -> None:
        state = self.game
        seed = self.rng.randbytes(SEED_BYTES)
        order = deck_order_from_seed(seed, state.deck())
        deal_number = state.deal_number + 1
        facts = state.deal(order)
        self.append(
            public(
                deal_committed=events_pb2.DealCommitted(
                    deal_number=deal_number, commitment=commitment(seed)
                )
            ),
            events_pb2.Event(
                audience=SERVER_ONLY,
                deal_shuffled=events_pb2.DealShuffled(
                    deal_number=deal_number, seed=seed.hex(), deck_order=card_texts(order)
                ),
            ),
            *self.facts(facts),
        )
        self._seed = seed

    def _move(self) -> None:
        state = self.game
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else self.rng.choice(seats)
        action = random_action(state, seat, self.rng)
        deal_number = state.deal_number
        facts = state.apply(seat, action)
        events = [
            events_pb2.Event(
                audience=audience_message(action_audience(action, seat)),
                action_taken=events_pb2.ActionTaken(
                    seat=seat, action=format_action(action), actor_id=self.occupant[seat]
                ),
            ),
            *self.facts(facts),
        ]
        if state.needs_deal() or state.is_over():
            events.append(
                public(
                    deal_seed_revealed=events_pb2.DealSeedRevealed(
                        deal_number=deal_number,
                        seed=self._seed.hex(),
                        commitment=commitment(self._seed),
                    )
                )
            )
        if state.is_over():
            events.append(self._finished())
        self.append(*events)

    def _finished(
        self,
        *,
        ended_early: bool = False,
        reason: events_pb2.GameFinished.Reason.ValueType = events_pb2.GameFinished.REASON_GAME_OVER,
    ) -> events_pb2.Event:
        state = self.game
        places = state.places() or places_from_totals(
            state.totals, lower_is_better=self.spec.lower_is_better
        )
        return public(
            game_finished=with_text(
                events_pb2.GameFinished(
                    totals=list(state.totals),
                    places=list(places),
                    ended_early=ended_early,
                    end_reason=reason,
                )
            )
        )

    def play_deals(self, deals: int) -> None:
        """Play ``deals`` whole deals (fewer if the game ends first)."""
        target = self.game.deal_number + deals
        while not self.game.is_over():
            if self.game.needs_deal():
                if self.game.deal_number >= target:
                    return
                self._deal()
            else:
                self._move()

    def play_steps(self, steps: int) -> None:
        """Deal or move ``steps`` times, stopping part-way through a deal."""
        for _ in range(steps):
            if self.game.is_over():
                return
            if self.game.needs_deal():
                self._deal()
            else:
                self._move()

    def play_to_end(self) -> None:
        self.play_deals(10_000)

    def play(self) -> TableLog:
        """The whole table: open, start, play every deal."""
        self.open_and_start()
        self.play_to_end()
        return self

    # -- leavers ---------------------------------------------------------------------------
    def leave(self, seat: int, *, bot_id: str | None = None) -> None:
        """The seat's person leaves the running game; a bot takes the seat at once."""
        progress = self.game.progress()
        person = self.occupant[seat]
        bot_id = bot_id or f"bot-{self.table_id[:8]}-{seat}"
        self.occupant[seat] = bot_id
        self.append(
            public(
                player_left=events_pb2.PlayerLeft(
                    seat=seat, player_id=person, disconnected=True, progress=progress
                )
            ),
            public(
                seat_handed_to_bot=with_text(
                    events_pb2.SeatHandedToBot(
                        seat=seat,
                        player_id=bot_id,
                        handover_reason=events_pb2.SeatHandedToBot.REASON_LEFT,
                        replaced_player_id=person,
                        progress=progress,
                    )
                )
            ),
        )

    def time_out(self, seat: int, *, bot_id: str | None = None) -> None:
        """The seat's third timeout in a row: a bot takes it for the rest of the game."""
        progress = self.game.progress()
        person = self.occupant[seat]
        bot_id = bot_id or f"bot-{self.table_id[:8]}-{seat}"
        self.occupant[seat] = bot_id
        self.append(
            public(turn_timed_out=events_pb2.TurnTimedOut(seat=seat, turn=1, consecutive=3)),
            public(
                seat_handed_to_bot=with_text(
                    events_pb2.SeatHandedToBot(
                        seat=seat,
                        player_id=bot_id,
                        handover_reason=events_pb2.SeatHandedToBot.REASON_TIMEOUTS,
                        replaced_player_id=person,
                        progress=progress,
                    )
                )
            ),
        )

    def reclaim(self, seat: int) -> None:
        player_id = self.players[seat].player_id
        self.occupant[seat] = player_id
        self.append(public(seat_reclaimed=events_pb2.SeatReclaimed(seat=seat, player_id=player_id)))

    def finish_with(self, totals: Sequence[int], *, dealer: int = 0) -> None:
        """A scripted ending for worked examples: one deal scoring ``totals``, then the end."""
        places = places_from_totals(totals, lower_is_better=self.spec.lower_is_better)
        self.append(*self.facts([DealStarted(1, dealer, 1)]))
        self.append(
            *self.facts([DealScored(1, tuple(totals), tuple(totals))]),
            public(
                game_finished=with_text(
                    events_pb2.GameFinished(
                        totals=totals,
                        places=places,
                        end_reason=events_pb2.GameFinished.REASON_GAME_OVER,
                    )
                )
            ),
        )

    def end_everyone_else_left(self) -> None:
        """Whist: every other person has left, so the game ends at once (docs/rules.md)."""
        early = events_pb2.GameFinished.REASON_EVERYONE_ELSE_LEFT
        self.append(self._finished(ended_early=True, reason=early))


def interleave(logs: Sequence[TableLog], seed: int = 7) -> list[events_pb2.EventBatch]:
    """Several tables' batches mixed as concurrent tables would append them."""
    queues = [list(reversed(log.batches)) for log in logs]
    rng = random.Random(seed)
    mixed = []
    while any(queues):
        queue = rng.choice([queue for queue in queues if queue])
        mixed.append(queue.pop())
    return mixed


# -- many tables from a few games ------------------------------------------------------------
#: Stands for the table id in a template; a table id (a UUID) has the same length, so swapping
#: the bytes keeps every protobuf length prefix right.
TABLE_MARK = "~" * 36
#: Player ids in copies all have this length, for the same reason.
PLAYER_ID_LENGTH = 16


def _player_mark(seat: int, kind: events_pb2.PlayerKind.ValueType) -> str:
    """Stands for the player of ``seat`` (``kind`` tells people from bots) in a template."""
    return f"^{'b' if kind == BOT else 'p'}{seat}".ljust(PLAYER_ID_LENGTH, "^")


@dataclass(frozen=True)
class TableTemplate:
    """One played table, serialized with marks where its table id and player ids go.

    ``batches`` are the messages; ``events`` each batch's events, serialized on their own
    (what a plain insert of the log stores). ``marked`` says which events hold a mark at all,
    so copying the others costs nothing.
    """

    game: str
    kinds: tuple[events_pb2.PlayerKind.ValueType, ...]
    batches: tuple[bytes, ...]
    events: tuple[tuple[bytes, ...], ...]
    marked: tuple[tuple[bool, ...], ...]

    @property
    def event_count(self) -> int:
        """Events in the whole table."""
        return sum(len(events) for events in self.events)


def table_template(game: str, seats: int, *, seed: int, options: dict[str, str]) -> TableTemplate:
    """Play one table to its end with random legal moves and keep it as a template.

    About one table in five loses a person part-way, whose seat a bot takes (a rated leaver);
    about one seat in seven is a bot from the start.
    """
    rng = random.Random(seed)
    kinds = tuple(BOT if rng.random() < 1 / 7 else PERSON for _ in range(seats))
    players = [
        Player(_player_mark(seat, kind), kind, _player_mark(seat, kind) if kind == PERSON else "")
        for seat, kind in enumerate(kinds)
    ]
    log = TableLog(game, players, seed=seed, options=options, table_id=TABLE_MARK)
    log.open_and_start()
    if PERSON in kinds and rng.random() < 0.2:
        log.play_steps(rng.randrange(1, 200))
        seat = kinds.index(PERSON)
        if not log.game.is_over():
            log.leave(seat, bot_id=_player_mark(seats + seat, BOT))
    log.play_to_end()
    events = tuple(tuple(event.SerializeToString() for event in b.events) for b in log.batches)
    marks = [TABLE_MARK.encode(), b"^"]
    return TableTemplate(
        game=log.spec.name,
        kinds=kinds,
        batches=tuple(batch.SerializeToString() for batch in log.batches),
        events=events,
        marked=tuple(tuple(any(m in e for m in marks) for e in batch) for batch in events),
    )


@dataclass(frozen=True)
class TableCopy:
    """A template replayed as another table: a new table id, new players in its seats."""

    template: TableTemplate
    table_id: str
    # Mark -> the id it stands for in this copy, all as bytes of equal length.
    replacements: tuple[tuple[bytes, bytes], ...]

    def render(self, data: bytes) -> bytes:
        """Template bytes with this copy's ids in place of the marks."""
        for mark, value in self.replacements:
            data = data.replace(mark, value)
        return data

    def batch(self, index: int) -> bytes:
        """The ``index``-th message of this table (its table version is ``index + 1``)."""
        return self.render(self.template.batches[index])

    def events(self, index: int) -> list[bytes]:
        """The events of the ``index``-th message, each serialized on its own."""
        marked = self.template.marked[index]
        return [
            self.render(event) if marked[position] else event
            for position, event in enumerate(self.template.events[index])
        ]


class Population:
    """The players copies draw from: people who come back for many games, and a few bots."""

    def __init__(self, people_count: int, bot_count: int, rng: random.Random) -> None:
        self._people = [f"person-{n:09d}" for n in range(people_count)]
        self._bots = [f"bot-{n:012d}" for n in range(bot_count)]
        self._rng = rng

    def copy(self, template: TableTemplate, table_id: str) -> TableCopy:
        """``template`` as table ``table_id``, with distinct players drawn for its seats."""
        seats = len(template.kinds)
        people = iter(self._rng.sample(self._people, seats))
        bots = iter(self._rng.sample(self._bots, min(2 * seats, len(self._bots))))
        replacements = [(TABLE_MARK.encode(), table_id.encode())]
        for seat, kind in enumerate(template.kinds):
            player = next(bots) if kind == BOT else next(people)
            replacements.append((_player_mark(seat, kind).encode(), player.encode()))
        for seat in range(seats):  # the bots that may take over a leaver's seat
            replacements.append((_player_mark(seats + seat, BOT).encode(), next(bots).encode()))
        return TableCopy(template, table_id, tuple(replacements))


def interleave_copies(
    templates: Sequence[TableTemplate],
    tables: int,
    *,
    tables_at_once: int,
    seed: int,
) -> Iterator[tuple[TableCopy, int]]:
    """The messages of ``tables`` tables copied from ``templates``, as a busy server logs them.

    ``tables_at_once`` tables are in play at any time; each next message comes from one of
    them at random, and a table that has finished makes room for the next one. Yields each
    message as (its table, its index in that table). The same arguments give the same log.
    """
    rng = random.Random(seed)
    population = Population(max(16, tables // 2), max(16, tables // 50), rng)

    def new_table() -> TableCopy:
        table_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        return population.copy(templates[rng.randrange(len(templates))], table_id)

    started = min(tables, tables_at_once)
    playing = [(new_table(), 0) for _ in range(started)]
    while playing:
        slot = rng.randrange(len(playing))
        table, index = playing[slot]
        yield table, index
        if index + 1 < len(table.template.batches):
            playing[slot] = (table, index + 1)
        elif started < tables:
            playing[slot] = (new_table(), 0)
            started += 1
        else:
            playing[slot] = playing[-1]
            playing.pop()
