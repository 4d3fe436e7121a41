"""Fixtures: the real rules service and a table service on real NATS JetStream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cardtable.table_service.quotas import QuotaSettings
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


#: Tight limits, so that a test reaches each with a few calls.
TIGHT_QUOTAS = QuotaSettings(
    mutations_per_second=5,
    mutation_burst=10,
    open_tables_per_player=3,
    seats_per_player=4,
    watches_per_player=2,
)


@pytest.fixture
async def quota_cluster(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> AsyncIterator[Cluster]:
    """The table service with ``TIGHT_QUOTAS``."""
    async with running_table_service(
        nats_url, nats_namespace.prefix, rules_address, quotas=TIGHT_QUOTAS
    ) as running:
        yield running
