"""The table service on real NATS JetStream, as in tests/table_service."""

from tests.table_service.conftest import cluster, rules_address

__all__ = ["cluster", "rules_address"]
