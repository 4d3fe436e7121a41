"""Composition root of the rules service: read settings, build the servicer, serve.

Run it with ``python -m cardtable.rules_service.main`` (or the ``cardtable-rules`` entry
point). Settings come from the environment: ``GRPC_PORT``, ``METRICS_PORT``, ``LOG_LEVEL``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from cardtable.platform.entrypoint import run_service
from cardtable.platform.grpc_server import Service, serve
from cardtable.platform.logging import configure_logging, get_logger
from cardtable.platform.settings import ServerSettings
from cardtable.rules_service.servicer import RulesServicer
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
    settings = ServerSettings.from_env(env)
    configure_logging(settings.log_level, service="rules")
    await serve(settings, [rules_service()], logger=get_logger("cardtable.rules"))


def main() -> int:
    return run_service("rules", run)


if __name__ == "__main__":
    sys.exit(main())
