"""The real rules service, as in tests/table_service."""

from tests.table_service.conftest import rules_address

__all__ = ["rules_address"]
