"""The rules service's own request handlers, called in-process behind the table service's
rules port: tables without a rules server, for tests. Its messages are identical to the
service's, so nothing in the table service can tell the two apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from cardtable.engine.errors import IllegalAction, InvalidInput
from cardtable.rules_service import servicer as local
from cardtable.rules_service.codec import StateNotFoundError
from cardtable.table_service.errors import BadRequestError, GameStateLostError, RuleViolationError
from cardtable_api.rules.v1 import rules_pb2

Reply = TypeVar("Reply")


class LocalRules:
    """The same request handlers as the rules service, called in-process."""

    @staticmethod
    def _run(work: Callable[[], Reply]) -> Reply:
        try:
            return work()
        except IllegalAction as error:
            raise RuleViolationError(str(error)) from None
        except InvalidInput as error:
            raise BadRequestError(str(error)) from None
        except StateNotFoundError as error:
            raise GameStateLostError(str(error)) from None

    async def list_games(self) -> rules_pb2.ListGamesResponse:
        return self._run(local.list_games)

    async def new_game(self, request: rules_pb2.NewGameRequest) -> rules_pb2.NewGameResponse:
        return self._run(lambda: local.new_game(request))

    async def deal(self, request: rules_pb2.DealRequest) -> rules_pb2.DealResponse:
        return self._run(lambda: local.deal(request))

    async def apply_action(
        self, request: rules_pb2.ApplyActionRequest
    ) -> rules_pb2.ApplyActionResponse:
        return self._run(lambda: local.apply_action(request))

    async def legal_actions(
        self, request: rules_pb2.LegalActionsRequest
    ) -> rules_pb2.LegalActionsResponse:
        return self._run(lambda: local.legal_actions(request))

    async def get_view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        return self._run(lambda: local.get_view(request))

    async def rebuild(self, request: rules_pb2.RebuildRequest) -> rules_pb2.RebuildResponse:
        return self._run(lambda: local.rebuild_state(request, lambda: None))
