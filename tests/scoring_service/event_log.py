"""Fixture event logs: whole games played with the engine, written as docs/events.md describes.

The table service is not in these tests; ``TableLog`` stands in for it. It plays a game with the
engine in-process (random legal moves, fair-deal seeds) and records each command's events as one
``EventBatch``: the deal's ``DealCommitted``, ``DealShuffled`` and facts; each move's
``ActionTaken`` and facts, ``DealSeedRevealed`` when the move ended a deal and ``GameFinished``
when it ended the game; leaves, hand-overs to bots and reclaims when a scenario asks for them.
It holds no game rule: whatever the engine says is what gets written.

    log = TableLog("whist", people("ann", "bob", "cy"), seed=1)
    log.open_and_start()
    log.play_deals(3)
    log.leave(seat=1)
    log.play_to_end()
    await publish(jetstream, names, log.batches)
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf import timestamp_pb2
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from cardtable.engine.actions import action_audience, format_action
from cardtable.engine.facts import DealScored, DealStarted, Fact
from cardtable.engine.game import GameState
from cardtable.engine.ranking import places_from_totals
from cardtable.engine.registry import game_spec
from cardtable.engine.shuffle import SEED_BYTES, commitment, deck_order_from_seed
from cardtable.rules_service.codec import card_texts, encode_audience, encode_facts
from cardtable.scoring_service.settings import EventLogNames
from cardtable.simulation.playout import random_action
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

PUBLIC = common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC)
SERVER_ONLY = common_pb2.Audience(kind=common_pb2.Audience.KIND_SERVER_ONLY)
PERSON = events_pb2.PLAYER_KIND_PERSON
BOT = events_pb2.PLAYER_KIND_BOT
EPOCH = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Player:
    player_id: str
    kind: int = PERSON
    display_name: str = ""


def people(*names: str) -> list[Player]:
    """People called ``names`` (their ids too)."""
    return [Player(name, PERSON, name.title()) for name in names]


def bot(name: str) -> Player:
    return Player(name, BOT, "")


def public(**body: Any) -> events_pb2.Event:
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
    ) -> None:
        self.spec = game_spec(game)
        self.players = list(players)
        self.options = dict(options or {})
        self.rng = random.Random(seed)
        self.table_id = table_id or str(uuid.uuid4())
        self.batches: list[events_pb2.EventBatch] = []
        self.state: GameState | None = None
        # Who plays each seat now (a bot after a leave), and the seats' display names.
        self.occupant = [player.player_id for player in self.players]
        self._clock = start

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
        return [
            events_pb2.Event(
                audience=fact.audience, fact_recorded=events_pb2.FactRecorded(fact=fact)
            )
            for fact in encode_facts(facts)
        ]

    # -- the lobby -------------------------------------------------------------------------
    def open(self) -> None:
        """TableCreated, then each player takes their seat in a command of their own."""
        self.append(
            public(
                table_created=events_pb2.TableCreated(
                    game=self.spec.name,
                    seats=len(self.players),
                    options=common_pb2.GameOptions(values=self.options),
                    settings=events_pb2.TableSettings(turn_timer_ms=30_000, fill_with_bots=True),
                    created_by=self.players[0].player_id,
                )
            )
        )
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
                audience=encode_audience(action_audience(action, seat)),
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

    def _finished(self, *, ended_early: bool = False, reason: str = "") -> events_pb2.Event:
        state = self.game
        places = state.places() or places_from_totals(
            state.totals, lower_is_better=self.spec.lower_is_better
        )
        return public(
            game_finished=events_pb2.GameFinished(
                totals=list(state.totals),
                places=list(places),
                ended_early=ended_early,
                reason=reason,
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
                seat_handed_to_bot=events_pb2.SeatHandedToBot(
                    seat=seat,
                    player_id=bot_id,
                    reason="left",
                    replaced_player_id=person,
                    progress=progress,
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
                seat_handed_to_bot=events_pb2.SeatHandedToBot(
                    seat=seat,
                    player_id=bot_id,
                    reason="timeouts",
                    replaced_player_id=person,
                    progress=progress,
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
            public(game_finished=events_pb2.GameFinished(totals=totals, places=places)),
        )

    def end_everyone_else_left(self) -> None:
        """Whist: every other person has left, so the game ends at once (RULES.md)."""
        self.append(self._finished(ended_early=True, reason="everyone_else_left"))


def interleave(logs: Sequence[TableLog], seed: int = 7) -> list[events_pb2.EventBatch]:
    """Several tables' batches mixed as concurrent tables would append them."""
    queues = [list(reversed(log.batches)) for log in logs]
    rng = random.Random(seed)
    mixed = []
    while any(queues):
        queue = rng.choice([queue for queue in queues if queue])
        mixed.append(queue.pop())
    return mixed


async def create_event_stream(jetstream: JetStreamContext, names: EventLogNames) -> None:
    """The events stream as docs/events.md describes it."""
    await jetstream.add_stream(
        api.StreamConfig(
            name=names.stream,
            subjects=[names.tables_subject],
            storage=api.StorageType.FILE,
            deny_delete=True,
            deny_purge=True,
            duplicate_window=120,
        )
    )


async def publish(
    jetstream: JetStreamContext,
    names: EventLogNames,
    batches: Iterable[events_pb2.EventBatch],
    *,
    message_ids: bool = True,
    expect_last_sequence: bool = True,
) -> list[int]:
    """Append each batch to its table's subject with the table service's headers.

    Appends are pipelined (acks awaited at the end), so ``Nats-Expected-Last-Subject-Sequence``
    is predicted: each new message takes the stream's next sequence.
    """
    next_sequence = (await jetstream.stream_info(names.stream)).state.last_seq + 1
    last_on_subject: dict[str, int] = {}
    pending = []
    for batch in batches:
        subject = names.table_subject(batch.table_id)
        headers = {"Cardtable-Schema": str(batch.schema_version)}
        if message_ids:
            headers["Nats-Msg-Id"] = batch.command_id
        if expect_last_sequence:
            if subject not in last_on_subject:
                try:
                    last = await jetstream.get_last_msg(names.stream, subject)
                    last_on_subject[subject] = last.seq or 0
                except NotFoundError:
                    last_on_subject[subject] = 0
            headers["Nats-Expected-Last-Subject-Sequence"] = str(last_on_subject[subject])
            last_on_subject[subject] = next_sequence
            next_sequence += 1
        pending.append(
            await jetstream.publish_async(
                subject, batch.SerializeToString(), stream=names.stream, headers=headers
            )
        )
    return [ack.seq for ack in await asyncio.gather(*pending)]
