"""What each command decides: the events it produces from a table, or why it is refused.

A decision reads the table and asks the rules service; it never writes. The application
appends the decision's events (optimistic concurrency, idempotent by command id) and only
then folds them into the table, so a refused or conflicting command leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from cardtable.engine.shuffle import commitment, deck_order_from_seed
from cardtable.platform.event_upcasting import with_text
from cardtable.platform.tokens import Principal
from cardtable.table_service.errors import (
    BadRequestError,
    ConcurrencyConflictError,
    PermissionDeniedError,
    RuleViolationError,
)
from cardtable.table_service.events import (
    facts_recorded,
    public,
    server_only,
    timestamp,
    with_audience,
)
from cardtable.table_service.limits import (
    DEFAULT_LIMITS,
    TableLimits,
    check_option_values,
    check_settings,
)
from cardtable.table_service.rated import is_rated
from cardtable.table_service.rules_port import SNAPSHOT_ENCODING, RulesPort
from cardtable.table_service.stand_in import stand_in_move, stand_in_strategy
from cardtable.table_service.state import BOT, OPEN, PERSON, RUNNING, TableState
from cardtable.views.decode import decode_view
from cardtable_api.common.v1 import common_pb2, views_pb2
from cardtable_api.events.v1 import events_pb2
from cardtable_api.events.v1.events_pb2 import BotSeatRequested, GameFinished, SeatHandedToBot
from cardtable_api.rules.v1 import rules_pb2

TIMEOUTS_BEFORE_HANDOVER = 3
MAX_ACTION_CHARS = 64


@dataclass
class Table:
    """A table: its folded events, and the rules service's state of its game (if started)."""

    state: TableState
    game_state: rules_pb2.GameState | None = None
    game_status: common_pb2.GameStatus | None = None
    #: The views of the seats to act that the rules service returned with the last move, and
    #: the game state they belong to: valid only while that is still ``game_state``.
    views: dict[int, views_pb2.SeatView] = field(default_factory=dict)
    views_state: rules_pb2.GameState | None = None
    #: Why the table is read-only: a batch of its log failed verification (log_security).
    broken: str | None = None

    def cached_view(self, seat: int) -> views_pb2.SeatView | None:
        """The seat's view of the current game state if the last move brought it along."""
        if self.views_state is None or self.views_state is not self.game_state:
            return None
        return self.views.get(seat)

    def adopt(self, decision: Decision) -> None:
        """Take a logged decision's game state, and its views if they belong to that state."""
        if decision.game_state is None:
            return
        self.game_state, self.game_status = decision.game_state, decision.game_status
        fresh = decision.views_state is decision.game_state
        self.views = decision.views if fresh else {}
        self.views_state = decision.game_state if fresh else None


@dataclass
class Decision:
    """The events a command produced, the game state they lead to, and a result for the caller."""

    events: list[events_pb2.Event] = field(default_factory=list)
    game_state: rules_pb2.GameState | None = None
    game_status: common_pb2.GameStatus | None = None
    seat: int | None = None
    bot_requests: list[events_pb2.BotSeatRequested] = field(default_factory=list)
    #: Views of the seats to act in ``views_state`` (see :meth:`Table.cached_view`).
    views: dict[int, views_pb2.SeatView] = field(default_factory=dict)
    views_state: rules_pb2.GameState | None = None
    #: Bot-held seats this service moved for because no computer player did in time.
    fallback_seats: list[int] = field(default_factory=list)


@dataclass
class Environment:
    """The outside world a decision may consult: time and a secure source of randomness."""

    now: Callable[[], float]
    seed: Callable[[], bytes] = lambda: secrets.token_bytes(32)
    choose: Callable[[int], int] = secrets.randbelow


def _bot_seats(state: TableState, decision: Decision | None) -> set[int]:
    """Seats a computer player holds once ``decision``'s events are folded too."""
    seats = {number for number, seat in enumerate(state.seats) if seat.is_bot}
    for event in decision.events if decision is not None else ():
        if event.HasField("seat_handed_to_bot"):
            seats.add(event.seat_handed_to_bot.seat)
        elif event.HasField("player_seated") and event.player_seated.kind == BOT:
            seats.add(event.player_seated.seat)
        elif event.HasField("seat_reclaimed"):
            seats.discard(event.seat_reclaimed.seat)
    return seats


def bot_id(table_id: str, seat: int) -> str:
    """The id of the computer player in a seat: stable, so its rating history adds up."""
    return f"bot:{table_id}:{seat}"


def fill_request(state: TableState, seat: int) -> BotSeatRequested:
    """The seat request that asks the bot service to play ``seat`` of a game being filled."""
    return with_text(
        BotSeatRequested(
            seat=seat,
            request_reason=BotSeatRequested.REASON_FILL,
            turn=state.turn,
            created_by=state.created_by,
        )
    )


class Decider:
    """The command handlers. Holds the rules port and caches what the rules service says."""

    def __init__(
        self, rules: RulesPort, environment: Environment, limits: TableLimits = DEFAULT_LIMITS
    ) -> None:
        self._rules = rules
        self._env = environment
        self._limits = limits
        self._games: dict[str, rules_pb2.GameInfo] = {}

    async def game_info(self, game: str) -> rules_pb2.GameInfo:
        if not self._games:
            reply = await self._rules.list_games()
            self._games = {info.name: info for info in reply.games}
        info = self._games.get(game)
        if info is None:
            known = ", ".join(sorted(self._games))
            raise BadRequestError(f"unknown game {game!r}: choose one of {known}")
        return info

    async def rated(self, created: events_pb2.TableCreated) -> bool:
        """Whether a table created so is rated under this deployment's bounds (rated.py)."""
        info = await self.game_info(created.game)
        return is_rated(
            created.settings, created.options.values, info, self._limits.rated_min_turn_timer_ms
        )

    # -- lobby --------------------------------------------------------------------------------
    async def create_table(
        self,
        principal: Principal,
        request: events_pb2.TableCreated,
    ) -> Decision:
        info = await self.game_info(request.game)
        seats = request.seats or info.min_players
        if not info.min_players <= seats <= info.max_players:
            raise BadRequestError(
                f"{info.title} is played by {info.min_players} to {info.max_players} players"
            )
        options = {option.name for option in info.options}
        unknown = sorted(set(request.options.values) - options)
        if unknown:
            shown = ", ".join(name[:40] for name in unknown[:5])
            raise BadRequestError(f"unknown option {shown} for {info.title}")
        check_option_values(dict(request.options.values))
        check_settings(request.settings, self._limits)
        # The rules service checks option values: a game that cannot be created is refused now.
        await self._rules.new_game(
            rules_pb2.NewGameRequest(
                game=info.name,
                players=seats,
                options=request.options,
                encoding=SNAPSHOT_ENCODING,
            )
        )
        created = events_pb2.TableCreated()
        created.CopyFrom(request)
        created.game, created.seats, created.created_by = info.name, seats, principal.player_id
        created.rated = await self.rated(created)
        return Decision(events=[public(table_created=created)])

    async def join(self, table: Table, principal: Principal, seat: int | None) -> Decision:
        state = table.state
        if state.status == RUNNING and not principal.is_bot:
            return self._come_back(state, principal, seat)
        if state.status != OPEN:
            raise RuleViolationError("the game has already started")
        if state.seat_of(principal.player_id) is not None:
            raise RuleViolationError("you already have a seat at this table")
        free = state.free_seats()
        if seat is None:
            if not free:
                raise RuleViolationError("the table is full")
            seat = free[0]
        elif not 0 <= seat < state.seat_count:
            raise BadRequestError(f"there is no seat {seat} at this table")
        elif seat not in free:
            raise RuleViolationError(f"seat {seat} is taken")
        kind = BOT if principal.is_bot else PERSON
        seated = events_pb2.PlayerSeated(
            seat=seat, player_id=principal.player_id, kind=kind, display_name=principal.player_id
        )
        decision = Decision(events=[public(player_seated=seated)], seat=seat)
        if len(free) == 1:  # the last seat: the game starts at once
            await self.begin_game(table, decision)
        return decision

    def _come_back(self, state: TableState, principal: Principal, seat: int | None) -> Decision:
        """A person who left, or lost the seat to timeouts, takes it back from the computer.

        docs/rules.md lets them reclaim it at their next turn; a move of theirs does that too (see
        ``seat_for_move``), but only after seeing the seat's cards, which a computer player's
        seat does not show them. Joining again reclaims it at once, so that their next turn
        is theirs to see and to play, and they are no longer counted as disconnected.
        """
        owned = state.owned_seat_of(principal.player_id)
        if owned is None or state.seats[owned].kind != BOT or seat not in (None, owned):
            raise RuleViolationError(
                "the game has already started: only a player who left may come back, to their "
                "own seat"
            )
        reclaimed = events_pb2.SeatReclaimed(seat=owned, player_id=principal.player_id)
        return Decision(events=[public(seat_reclaimed=reclaimed)], seat=owned)

    async def start(self, table: Table, principal: Principal | None) -> Decision:
        """Start now: empty seats are filled with computer players if the table allows it.

        ``principal`` is None when the table itself starts the game (its fill wait is over).
        """
        state = table.state
        if state.status != OPEN:
            raise RuleViolationError("the game has already started")
        if principal is not None and state.seat_of(principal.player_id) is None:
            raise PermissionDeniedError("only a player seated at the table may start it")
        free = state.free_seats()
        if free and not state.settings.fill_with_bots:
            raise RuleViolationError(
                "the table is not full and does not fill with computer players"
            )
        decision = Decision()
        for seat in free:
            decision.events.append(
                public(
                    seat_handed_to_bot=with_text(
                        SeatHandedToBot(
                            seat=seat,
                            player_id=bot_id(state.table_id, seat),
                            handover_reason=SeatHandedToBot.REASON_FILL,
                        )
                    )
                )
            )
            decision.bot_requests.append(fill_request(state, seat))
        decision.events.extend(
            public(bot_seat_requested=request) for request in decision.bot_requests
        )
        await self.begin_game(table, decision)
        return decision

    async def begin_game(self, table: Table, decision: Decision) -> None:
        """Add the game's start and first deal to ``decision`` (seats taken in it count)."""
        state = table.state
        first_dealer = self._env.choose(state.seat_count)
        reply = await self._rules.new_game(
            rules_pb2.NewGameRequest(
                game=state.game,
                players=state.seat_count,
                options=common_pb2.GameOptions(values=state.options),
                first_dealer=first_dealer,
                encoding=SNAPSHOT_ENCODING,
            )
        )
        player_ids = [seat.player_id for seat in state.seats]
        for event in decision.events:  # seats taken in this same batch
            if event.HasField("player_seated"):
                player_ids[event.player_seated.seat] = event.player_seated.player_id
            if event.HasField("seat_handed_to_bot"):
                player_ids[event.seat_handed_to_bot.seat] = event.seat_handed_to_bot.player_id
        decision.events.append(
            public(
                game_started=events_pb2.GameStarted(
                    first_dealer=first_dealer, player_ids=player_ids, game_number=1
                )
            )
        )
        reply.state.scope = state.table_id
        events, game_state, status = await self._deal(reply.state, list(reply.deck))
        decision.events.extend(events)
        decision.game_state, decision.game_status = game_state, status
        decision.events.extend(self._timer(state, status, turn=state.turn, decision=decision))

    async def _deal(
        self, game_state: rules_pb2.GameState, deck: list[str]
    ) -> tuple[list[events_pb2.Event], rules_pb2.GameState, common_pb2.GameStatus]:
        """A fair deal: commit to a fresh seed, derive the deck from it, deal."""
        seed = self._env.seed()
        order = list(deck_order_from_seed(seed, deck))
        reply = await self._rules.deal(
            rules_pb2.DealRequest(state=game_state, deck_order=order, by_reference=True)
        )
        number = reply.status.deal_number
        events = [
            public(
                deal_committed=events_pb2.DealCommitted(
                    deal_number=number, commitment=commitment(seed)
                )
            ),
            server_only(
                deal_shuffled=events_pb2.DealShuffled(
                    deal_number=number, seed=seed.hex(), deck_order=order
                )
            ),
            *facts_recorded(reply.facts),
        ]
        return events, reply.state, reply.status

    def _timer(
        self,
        state: TableState,
        status: common_pb2.GameStatus,
        turn: int,
        decision: Decision | None = None,
    ) -> list[events_pb2.Event]:
        """The turn's deadline: the table's timer for every seat to act, or the computer
        players' deadline (``bot_fallback_ms``) when only bot-held seats are covered, after
        which this service moves for them: a bot service too busy to take a seat never stalls
        a game, with or without a timer. A turn a person shares (Hearts' passing) keeps the
        table's timer, which is the person's time to think."""
        if status.over or not status.to_act:
            return []
        timer_ms, seats = state.settings.turn_timer_ms, list(status.to_act)
        bots = _bot_seats(state, decision)
        if not timer_ms:
            seats = [seat for seat in seats if seat in bots]
            if not seats:
                return []
        if all(seat in bots for seat in seats):
            timer_ms = min(timer_ms or self._limits.bot_fallback_ms, self._limits.bot_fallback_ms)
        deadline = self._env.now() + timer_ms / 1000.0
        return [
            public(
                turn_timer_started=events_pb2.TurnTimerStarted(
                    seats=seats, deadline=timestamp(deadline), turn=turn
                )
            )
        ]

    async def leave(self, table: Table, principal: Principal) -> Decision:
        state = table.state
        seat = state.seat_of(principal.player_id)
        if seat is None:
            raise RuleViolationError("you have no seat at this table")
        if state.status != RUNNING:
            left = events_pb2.PlayerLeft(seat=seat, player_id=principal.player_id)
            return Decision(events=[public(player_left=left)])
        status = table.game_status
        assert status is not None
        progress = status.progress
        left = events_pb2.PlayerLeft(
            seat=seat, player_id=principal.player_id, disconnected=True, progress=progress
        )
        decision = Decision(
            events=[public(player_left=left)], game_state=table.game_state, game_status=status
        )
        self._hand_over(state, seat, SeatHandedToBot.REASON_LEFT, progress, decision)
        await self._end_if_alone(table, decision, leaver_seat=seat)
        if not state.settings.turn_timer_ms and seat in status.to_act and not status.over:
            # the seat is a computer player's now, and no timer covers its turn yet
            decision.events.extend(self._timer(state, status, turn=state.turn, decision=decision))
        return decision

    def _hand_over(
        self,
        state: TableState,
        seat: int,
        reason: SeatHandedToBot.Reason.ValueType,
        progress: float,
        decision: Decision,
    ) -> None:
        occupant = state.seats[seat]
        handed = with_text(
            SeatHandedToBot(
                seat=seat,
                player_id=bot_id(state.table_id, seat),
                handover_reason=reason,
                replaced_player_id=occupant.player_id,
                progress=progress,
            )
        )
        request = with_text(
            BotSeatRequested(
                seat=seat,
                request_reason=BotSeatRequested.REASON_HANDOVER,
                turn=state.turn,
                created_by=state.created_by,
            )
        )
        decision.events.extend(
            [public(seat_handed_to_bot=handed), public(bot_seat_requested=request)]
        )
        decision.bot_requests.append(request)

    async def _end_if_alone(self, table: Table, decision: Decision, leaver_seat: int) -> None:
        """Whist's rule: when every other person has left, the game ends at once."""
        state = table.state
        info = await self.game_info(state.game)
        if not info.ends_when_one_person_remains or state.seats[leaver_seat].kind != PERSON:
            return
        people = [seat for seat in state.people() if seat != leaver_seat]
        if len(people) != 1:
            return
        status = table.game_status
        assert status is not None
        remaining = people[0]
        places = [1 if seat == remaining else 2 for seat in range(state.seat_count)]
        decision.events.extend(self._reveal_current_deal(state, status))
        decision.events.append(
            public(
                game_finished=with_text(
                    GameFinished(
                        totals=list(status.totals),
                        places=places,
                        ended_early=True,
                        end_reason=GameFinished.REASON_EVERYONE_ELSE_LEFT,
                    )
                )
            )
        )

    def _reveal_current_deal(
        self, state: TableState, status: common_pb2.GameStatus
    ) -> list[events_pb2.Event]:
        proof = state.deals.get(status.deal_number)
        if proof is None or proof.revealed:
            return []
        revealed = events_pb2.DealSeedRevealed(
            deal_number=status.deal_number, seed=proof.seed, commitment=proof.commitment
        )
        return [public(deal_seed_revealed=revealed)]

    # -- play ---------------------------------------------------------------------------------
    def seat_for_move(self, table: Table, principal: Principal, seat: int) -> bool:
        """Check the caller may act for ``seat``; True when the move reclaims the seat."""
        state = table.state
        if state.status != RUNNING:
            raise RuleViolationError("the game is not running")
        if not 0 <= seat < state.seat_count:
            raise BadRequestError(f"there is no seat {seat} at this table")
        occupant = state.seats[seat]
        if occupant.player_id == principal.player_id:
            return False
        if occupant.is_bot and principal.plays_bot_seat(state.table_id, seat):
            return False
        if occupant.owner_id == principal.player_id and not principal.is_bot:
            return True
        raise PermissionDeniedError(f"you may not act for seat {seat}")

    async def move(
        self,
        table: Table,
        principal: Principal,
        seat: int,
        action: str,
        expected_version: int = 0,
    ) -> Decision:
        """``seat``'s ``action``; ``expected_version`` (0: any), the table's version the
        player decided on, refuses the move once the table has moved on since."""
        if expected_version and table.state.version != expected_version:
            raise ConcurrencyConflictError(
                f"the table is at version {table.state.version}, not {expected_version}"
            )
        if not action.strip() or len(action) > MAX_ACTION_CHARS:
            raise BadRequestError(f"an action is 1 to {MAX_ACTION_CHARS} characters")
        reclaim = self.seat_for_move(table, principal, seat)
        decision = Decision(game_state=table.game_state, game_status=table.game_status)
        state = table.state
        if reclaim:
            decision.events.append(
                public(
                    seat_reclaimed=events_pb2.SeatReclaimed(
                        seat=seat, player_id=principal.player_id
                    )
                )
            )
        await self._apply(state, decision, seat, action, principal.player_id, by_timeout=False)
        return decision

    async def _apply(
        self,
        state: TableState,
        decision: Decision,
        seat: int,
        action: str,
        actor: str,
        *,
        by_timeout: bool,
    ) -> None:
        """Apply one action to ``decision``'s game state and add what follows from it."""
        assert decision.game_state is not None
        reply = await self._rules.apply_action(
            rules_pb2.ApplyActionRequest(
                state=decision.game_state,
                seat=seat,
                action=action,
                include_views_of_seats_to_act=True,
                typed_views=True,
                by_reference=True,
            )
        )
        taken = events_pb2.ActionTaken(
            seat=seat, action=action, actor_id=actor, by_timeout=by_timeout
        )
        decision.events.append(with_audience(reply.action_audience, action_taken=taken))
        decision.events.extend(facts_recorded(reply.facts))
        game_state, status = reply.state, reply.status
        dealt = False
        previous = decision.game_status
        assert previous is not None
        if status.over or status.needs_deal:
            decision.events.extend(self._reveal_current_deal(state, previous))
        if status.over:
            decision.events.append(
                public(
                    game_finished=with_text(
                        GameFinished(
                            totals=list(status.totals),
                            places=list(status.places),
                            end_reason=GameFinished.REASON_GAME_OVER,
                        )
                    )
                )
            )
        elif status.needs_deal:
            deck = await self._deck(state)
            events, game_state, status = await self._deal(game_state, deck)
            decision.events.extend(events)
            dealt = True
        decision.game_state, decision.game_status = game_state, status
        # The views came with the action: they are of this state unless a deal followed.
        decision.views = (
            {} if dealt else {view.seat: view.seat_view for view in reply.views_of_seats_to_act}
        )
        decision.views_state = None if dealt else game_state
        turns_in_batch = sum(1 for event in decision.events if event.HasField("action_taken"))
        decision.events = [
            event for event in decision.events if not event.HasField("turn_timer_started")
        ]
        decision.events.extend(
            self._timer(state, status, turn=state.turn + turns_in_batch, decision=decision)
        )

    async def _deck(self, state: TableState) -> list[str]:
        reply = await self._rules.new_game(
            rules_pb2.NewGameRequest(
                game=state.game,
                players=state.seat_count,
                options=common_pb2.GameOptions(values=state.options),
                encoding=SNAPSHOT_ENCODING,
            )
        )
        return list(reply.deck)

    async def timeout(self, table: Table, turn: int) -> Decision:
        """The turn's deadline passed: a computer player moves for each seat still to act."""
        state = table.state
        decision = Decision(game_state=table.game_state, game_status=table.game_status)
        if state.status != RUNNING or state.turn != turn or state.timer is None:
            return decision  # stale: someone moved in time, nothing to do
        if self._env.now() < state.timer.deadline:
            raise RuleViolationError("the turn has not timed out yet")
        status = table.game_status
        assert status is not None
        covered = set(state.timer.seats)
        for seat in [seat for seat in status.to_act if seat in covered]:
            occupant = state.seats[seat]
            consecutive = occupant.consecutive_timeouts + 1
            if occupant.is_bot:
                decision.fallback_seats.append(seat)
            decision.events.append(
                public(
                    turn_timed_out=events_pb2.TurnTimedOut(
                        seat=seat, turn=turn, consecutive=consecutive
                    )
                )
            )
            action = await self._computer_move(table, decision, seat)
            await self._apply(state, decision, seat, action, "timer", by_timeout=True)
            current = decision.game_status
            assert current is not None
            if current.over:
                # The timed-out move ended the game: there is no rest of the game to hand the
                # seat over for, and the game has already finished once.
                break
            if consecutive >= TIMEOUTS_BEFORE_HANDOVER and occupant.kind == PERSON:
                self._hand_over(
                    state, seat, SeatHandedToBot.REASON_TIMEOUTS, current.progress, decision
                )
                await self._end_if_alone(
                    Table(state, decision.game_state, decision.game_status), decision, seat
                )
            if any(event.HasField("game_finished") for event in decision.events):
                break
        return decision

    async def _computer_move(self, table: Table, decision: Decision, seat: int) -> str:
        """The move of the table's computer player for the timed-out seat (stand_in.py), from
        that seat's view; a random legal move if the strategy fails."""
        assert decision.game_state is not None
        view = None
        if decision.views_state is decision.game_state:
            view = decision.views.get(seat)
        elif decision.game_state is table.game_state:
            view = table.cached_view(seat)
        if view is None:
            reply = await self._rules.get_view(
                rules_pb2.GetViewRequest(state=decision.game_state, seat=seat, typed_view=True)
            )
            view = reply.seat_view
        strategy = stand_in_strategy(table.state.settings.bot_strategy)
        # In a worker thread, so that the capped search lets the other tables' commands in.
        action = await asyncio.to_thread(
            stand_in_move, strategy, decode_view(view), self._env.seed()
        )
        return action if action is not None else await self._random_move(decision, seat)

    async def _random_move(self, decision: Decision, seat: int) -> str:
        """A random legal move, chosen with the secure generator: the last resort."""
        assert decision.game_state is not None
        legal = await self._rules.legal_actions(
            rules_pb2.LegalActionsRequest(state=decision.game_state, seat=seat)
        )
        if legal.HasField("choose_cards"):
            cards = list(legal.choose_cards.cards)
            chosen = []
            for _ in range(legal.choose_cards.count):
                chosen.append(cards.pop(self._env.choose(len(cards))))
            return " ".join([legal.choose_cards.verb, *chosen])
        if not legal.actions:
            raise RuleViolationError(f"seat {seat} has no legal action")
        return legal.actions[self._env.choose(len(legal.actions))]
