"""The real rules service in-process, as the table-service tests use it."""

from tests.table_service.conftest import rules_address

__all__ = ["rules_address"]
