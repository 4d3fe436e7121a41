"""Fixtures: the real rules service and a table service on real NATS, as the table tests use."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import Cluster, running_rules, running_table_service


@pytest.fixture
async def rules_address() -> AsyncIterator[str]:
    async with running_rules() as address:
        yield address


@pytest.fixture
async def cluster(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> AsyncIterator[Cluster]:
    async with running_table_service(nats_url, nats_namespace.prefix, rules_address) as running:
        yield running
