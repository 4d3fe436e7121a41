"""Composition root of the rules service: read settings, build the servicer, serve.

Run it with ``python -m cardtable.rules_service.main`` (or the ``cardtable-rules`` entry
point). Settings come from the environment: ``GRPC_PORT``, ``METRICS_PORT``, ``LOG_LEVEL``,
``RULES_STATE_MEMO_SIZE`` (``settings``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from cardtable.platform.entrypoint import run_service
from cardtable.platform.grpc_server import Service, serve
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.metrics import new_registry
from cardtable.rules_service import codec
from cardtable.rules_service.metrics import StateMemoCollector
from cardtable.rules_service.servicer import RulesServicer
from cardtable.rules_service.settings import RulesSettings
from cardtable_api.rules.v1 import rules_pb2, rules_pb2_grpc

SERVICE_NAME = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name


def rules_service() -> Service:
    """The rules servicer, ready to add to a server (also used by in-process tests)."""
    return Service(
        name=SERVICE_NAME,
        servicer=RulesServicer(),
        add_to_server=rules_pb2_grpc.add_RulesServiceServicer_to_server,
    )


async def run(env: Mapping[str, str]) -> None:
    """Serve until SIGTERM or Ctrl-C."""
    settings = RulesSettings.from_env(env)
    configure_logging(settings.server.log_level, service="rules")
    codec.MEMO.resize(settings.state_memo_size)
    registry = new_registry()
    registry.register(StateMemoCollector(lambda: codec.MEMO))
    await serve(
        settings.server, [rules_service()], logger=get_logger("cardtable.rules"), registry=registry
    )


def main() -> int:
    return run_service("rules", run)


if __name__ == "__main__":
    sys.exit(main())
