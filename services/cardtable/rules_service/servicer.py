"""The RulesService servicer: decode the request, ask the engine, encode the answer.

Every engine error becomes a gRPC status here and nowhere else: malformed input is
INVALID_ARGUMENT, a move the rules forbid is FAILED_PRECONDITION with the engine's sentence,
so the player reads the same text the engine wrote, and a state reference this replica does
not hold is NOT_FOUND. The engine is synchronous and fast (well under a millisecond per call),
so it runs on the event loop without a thread hop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import grpc

from cardtable.engine.actions import action_audience, format_action, parse_action
from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.engine.options import describe_options
from cardtable.engine.registry import GAMES, game_spec
from cardtable.engine.replay import ActionInput, DealInput, GameInput, rebuild
from cardtable.platform.grpc_server import bounded_details
from cardtable.platform.logging import get_logger
from cardtable.rules_service import codec
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc

Response = TypeVar("Response")
_log = get_logger(__name__)
Context = grpc.aio.ServicerContext[Any, Any]


class DeadlineExceededError(Exception):
    """The caller's deadline ran out during a long rebuild; nothing more is worth computing."""


async def run_engine(context: Context, work: Callable[[], Response]) -> Response:
    """Run ``work`` and turn the engine's typed errors into the matching gRPC status."""
    try:
        return work()
    except IllegalAction as error:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, bounded_details(str(error)))
    except InvalidInput as error:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded_details(str(error)))
    except codec.StateNotFoundError as error:
        await context.abort(grpc.StatusCode.NOT_FOUND, bounded_details(str(error)))
    except DeadlineExceededError as error:
        await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, bounded_details(str(error)))
    raise AssertionError("context.abort always raises")  # pragma: no cover


def list_games() -> rules_pb2.ListGamesResponse:
    games = [
        rules_pb2.GameInfo(
            name=spec.name,
            title=spec.title,
            min_players=spec.min_players,
            max_players=spec.max_players,
            lower_is_better=spec.lower_is_better,
            ends_when_one_person_remains=spec.ends_when_one_person_remains,
            teams=[rules_pb2.Team(seats=list(team)) for team in spec.teams],
            options=[
                rules_pb2.OptionInfo(
                    name=option["name"],
                    default_value=str(option["default"]).lower(),
                    help=option["help"],
                )
                for option in describe_options(spec.options_type)
            ],
        )
        for spec in GAMES.values()
    ]
    return rules_pb2.ListGamesResponse(games=games)


def new_game(request: rules_pb2.NewGameRequest) -> rules_pb2.NewGameResponse:
    spec = game_spec(request.game)
    state = spec.new_game(request.players, dict(request.options.values), request.first_dealer)
    return rules_pb2.NewGameResponse(
        state=codec.encode_state(state, encoding=request.encoding),
        status=codec.encode_status(state),
        deck=codec.deck_texts(state),
    )


def deal(
    request: rules_pb2.DealRequest, into: rules_pb2.DealResponse | None = None
) -> rules_pb2.DealResponse:
    """The deal applied; written into ``into`` when given (a pipelined reply's field)."""
    state = codec.decode_state(request.state, to_change=True)
    try:
        order = codec.decode_deck_order(request.deck_order)
        facts = state.deal(order)
    except (IllegalAction, InvalidInput):
        codec.keep_unchanged(request.state, state)  # the engine checks before it changes
        raise
    response = rules_pb2.DealResponse() if into is None else into
    response.state.CopyFrom(
        codec.encode_state(
            state,
            by_reference=request.by_reference,
            scope=request.state.scope,
            encoding=request.state.encoding,
        )
    )
    response.status.CopyFrom(codec.encode_status(state))
    codec.add_facts(response.facts, facts)
    return response


def apply_action(
    request: rules_pb2.ApplyActionRequest, into: rules_pb2.ApplyActionResponse | None = None
) -> rules_pb2.ApplyActionResponse:
    """The action applied; written into ``into`` when given (a pipelined reply's field), so
    that the views, the largest part, are built where they stay instead of being copied."""
    state = codec.decode_state(request.state, to_change=True)
    try:
        if not 0 <= request.seat < state.num_players:  # malformed, as for LegalActions
            raise InvalidInput(f"there is no seat {request.seat} at this table")
        action = parse_action(codec.decode_action_text(request.action))
        facts = state.apply(request.seat, action)
    except (IllegalAction, InvalidInput):
        # A refused move leaves the state as it was (the engine checks before it changes
        # anything): the player's next try sends the same snapshot or reference.
        codec.keep_unchanged(request.state, state)
        raise
    response = rules_pb2.ApplyActionResponse() if into is None else into
    response.status.CopyFrom(codec.encode_status(state))
    if request.include_views_of_seats_to_act:
        for seat in response.status.to_act:
            seat_view = response.views_of_seats_to_act.add(seat=seat)
            codec.fill_view(seat_view, state.observation(seat), typed=request.typed_views)
    response.state.CopyFrom(
        codec.encode_state(
            state,
            by_reference=request.by_reference,
            scope=request.state.scope,
            encoding=request.state.encoding,
        )
    )
    codec.add_facts(response.facts, facts)
    response.action_audience.CopyFrom(codec.encode_audience(action_audience(action, request.seat)))
    return response


def legal_actions(request: rules_pb2.LegalActionsRequest) -> rules_pb2.LegalActionsResponse:
    state = codec.decode_state(request.state)
    if not 0 <= request.seat < state.num_players:
        raise InvalidInput(f"there is no seat {request.seat} at this table")
    choice = state.card_set_choice(request.seat)
    if choice is not None:
        verb = format_action(choice.make(choice.cards[: choice.count])).split()[0]
        return rules_pb2.LegalActionsResponse(
            choose_cards=rules_pb2.CardSetChoice(
                verb=verb, cards=codec.card_texts(choice.cards), count=choice.count
            )
        )
    actions = [format_action(action) for action in state.legal_actions(request.seat)]
    return rules_pb2.LegalActionsResponse(actions=actions)


def get_view(
    request: rules_pb2.GetViewRequest, into: rules_pb2.GetViewResponse | None = None
) -> rules_pb2.GetViewResponse:
    """What a seat (or a spectator) may see; written into ``into`` when given."""
    state = codec.decode_state(request.state)
    seat = request.seat if request.HasField("seat") else None
    if seat is not None and not 0 <= seat < state.num_players:
        raise InvalidInput(f"there is no seat {seat} at this table")
    response = rules_pb2.GetViewResponse() if into is None else into
    codec.fill_view(response, state.observation(seat), typed=request.typed_view)
    response.status.CopyFrom(codec.encode_status(state))
    return response


def rebuild_state(
    request: rules_pb2.RebuildRequest, on_step: Callable[[], None]
) -> rules_pb2.RebuildResponse:
    if len(request.inputs) > codec.MAX_REBUILD_INPUTS:
        raise InvalidInput(f"at most {codec.MAX_REBUILD_INPUTS} inputs per rebuild")
    spec = game_spec(request.game)
    inputs = [decode_input(step) for step in request.inputs]
    state = rebuild(
        spec,
        request.players,
        dict(request.options.values),
        request.first_dealer,
        inputs,
        on_step=on_step,
    )
    return rules_pb2.RebuildResponse(
        state=codec.encode_state(state, encoding=request.encoding),
        status=codec.encode_status(state),
    )


def decode_input(step: rules_pb2.GameInput) -> GameInput:
    which = step.WhichOneof("input")
    if which == "deal":
        return DealInput(tuple(codec.decode_deck_order(step.deal.cards)))
    if which == "action":
        text = codec.decode_action_text(step.action.action)
        return ActionInput(step.action.seat, parse_action(text))
    raise InvalidInput("each rebuild input is a deal or an action")


def _legal_actions_into(
    request: rules_pb2.LegalActionsRequest, into: rules_pb2.LegalActionsResponse
) -> rules_pb2.LegalActionsResponse:
    into.CopyFrom(legal_actions(request))
    return into


#: The calls a pipeline carries, by the name of their field in ``PipelinedCall``: each writes
#: its answer into the reply's field of the same name.
PIPELINED: dict[str, Callable[[Any, Any], Any]] = {
    "deal": deal,
    "apply_action": apply_action,
    "legal_actions": _legal_actions_into,
    "get_view": get_view,
}


def answer(call: rules_pb2.PipelinedCall, answered: rules_pb2.PipelinedReply) -> None:
    """One pipelined call, answered into ``answered`` as its unary method would be; a failure
    is its status.

    An unexpected error (a bug) fails only its own call, as INTERNAL: the stream carries other
    tables' calls, which deserve their answers.
    """
    answered.id = call.id
    which = call.WhichOneof("request")
    if which is None:
        _failed(answered, grpc.StatusCode.INVALID_ARGUMENT, "the call holds no request")
        return
    into = getattr(answered, which)
    into.SetInParent()  # an answer with every field at its default is still this answer
    try:
        PIPELINED[which](getattr(call, which), into)
    except IllegalAction as error:
        _failed(answered, grpc.StatusCode.FAILED_PRECONDITION, str(error))
    except InvalidInput as error:
        _failed(answered, grpc.StatusCode.INVALID_ARGUMENT, str(error))
    except codec.StateNotFoundError as error:
        _failed(answered, grpc.StatusCode.NOT_FOUND, str(error))
    except Exception as error:
        _log.exception("pipelined call failed", extra={"call": which})
        _failed(answered, grpc.StatusCode.INTERNAL, type(error).__name__)


def _failed(answered: rules_pb2.PipelinedReply, code: grpc.StatusCode, message: str) -> None:
    answered.failed.code = code.value[0]
    answered.failed.message = bounded_details(message)


def deadline_check(context: Context) -> Callable[[], None]:
    """A cheap check run between inputs, so a rebuild stops once nobody waits for it."""

    def check() -> None:
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise DeadlineExceededError("the deadline ran out while rebuilding")

    return check


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    """Everything a call needs arrives in its request, but for the states it holds for
    references (codec.StateMemo): a replica that lost them answers NOT_FOUND, nothing worse."""

    async def ListGames(
        self, request: rules_pb2.ListGamesRequest, context: Context
    ) -> rules_pb2.ListGamesResponse:
        return await run_engine(context, list_games)

    async def NewGame(
        self, request: rules_pb2.NewGameRequest, context: Context
    ) -> rules_pb2.NewGameResponse:
        return await run_engine(context, lambda: new_game(request))

    async def Deal(
        self, request: rules_pb2.DealRequest, context: Context
    ) -> rules_pb2.DealResponse:
        return await run_engine(context, lambda: deal(request))

    async def ApplyAction(
        self, request: rules_pb2.ApplyActionRequest, context: Context
    ) -> rules_pb2.ApplyActionResponse:
        return await run_engine(context, lambda: apply_action(request))

    async def LegalActions(
        self, request: rules_pb2.LegalActionsRequest, context: Context
    ) -> rules_pb2.LegalActionsResponse:
        return await run_engine(context, lambda: legal_actions(request))

    async def GetView(
        self, request: rules_pb2.GetViewRequest, context: Context
    ) -> rules_pb2.GetViewResponse:
        return await run_engine(context, lambda: get_view(request))

    async def Rebuild(
        self, request: rules_pb2.RebuildRequest, context: Context
    ) -> rules_pb2.RebuildResponse:
        return await run_engine(context, lambda: rebuild_state(request, deadline_check(context)))

    async def Pipeline(
        self, request_iterator: AsyncIterator[rules_pb2.PipelineRequest], context: Context
    ) -> AsyncIterator[rules_pb2.PipelineResponse]:
        """Each message's calls answered in order, in one message (see rules.proto)."""
        async for request in request_iterator:
            response = rules_pb2.PipelineResponse()
            for call in request.calls:
                answer(call, response.replies.add())
            yield response
