"""The event log's names, derived from one prefix, for every component that touches NATS.

One deployment (or one test) owns everything under its ``EVENT_PREFIX``: the events stream, one
subject per table, the republished copies of stored batches, the bot seat requests, the lobby
and claims buckets and each component's reply inbox. Every component derives them here, so the
table service, the scoring service, the bot service, the operator tools and the NATS
permissions (``platform/nats_access.py``) can never disagree about a name.

Stream and bucket names may not hold ``.`` (nor ``-`` in older NATS tools): those become ``_``.
Subjects keep the prefix as written.

    >>> names = LogNames.from_prefix("acme-eu")
    >>> names.stream, names.table_subject("42"), names.table_id_of("acme-eu.table.42")
    ('acme_eu_EVENTS', 'acme-eu.table.42', '42')
    >>> names.lobby_bucket, names.claims_bucket, names.bot_requests
    ('acme_eu_TABLES', 'acme_eu_BOT_SEATS', 'acme-eu.bots.requests')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_PREFIX = "cardtable"
#: One or more NATS subject tokens of letters, digits, ``_`` and ``-``.
PREFIX_PATTERN = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
#: Stream names are at most 255 characters in NATS: the longest derived one adds 10.
MAX_PREFIX_CHARS = 64


class LogNameError(ValueError):
    """The prefix cannot name NATS subjects and streams."""


def check_prefix(prefix: str) -> str:
    """``prefix`` if it can name subjects and streams, else :class:`LogNameError`."""
    if not PREFIX_PATTERN.match(prefix) or len(prefix) > MAX_PREFIX_CHARS:
        raise LogNameError(
            f"EVENT_PREFIX={prefix!r} must be up to {MAX_PREFIX_CHARS} characters: letters, "
            "digits, '_' and '-', in tokens separated by '.'"
        )
    return prefix


@dataclass(frozen=True)
class LogNames:
    """Every NATS name of one deployment's event log."""

    prefix: str

    @classmethod
    def from_prefix(cls, prefix: str = DEFAULT_PREFIX) -> LogNames:
        """The names for a checked prefix."""
        return cls(check_prefix(prefix))

    @property
    def _name(self) -> str:
        """The prefix as a stream or bucket name allows it."""
        return self.prefix.replace(".", "_").replace("-", "_")

    # -- the events stream -------------------------------------------------------------------
    @property
    def stream(self) -> str:
        """The one stream holding every table's batches."""
        return f"{self._name}_EVENTS"

    @property
    def tables_subject(self) -> str:
        """Every table's subject (table ids hold no dots)."""
        return f"{self.prefix}.table.*"

    def table_subject(self, table_id: str) -> str:
        """The subject of one table's batches."""
        return f"{self.prefix}.table.{table_id}"

    def table_id_of(self, subject: str) -> str | None:
        """The table id a subject names, or ``None`` when it is not a table subject."""
        head = f"{self.prefix}.table."
        if not subject.startswith(head):
            return None
        table_id = subject[len(head) :]
        return table_id if table_id and "." not in table_id else None

    @property
    def stored_root(self) -> str:
        """Where the stream republishes each batch once stored (see the table service's store)."""
        return f"{self.prefix}.stored"

    def stored_subject(self, table_id: str) -> str:
        """Where one table's batches are republished once stored."""
        return f"{self.stored_root}.{self.table_subject(table_id)}"

    # -- computer players ----------------------------------------------------------------------
    @property
    def bot_requests(self) -> str:
        """Where the table service asks the bot service to take seats."""
        return f"{self.prefix}.bots.requests"

    @property
    def bot_queue_group(self) -> str:
        """The bot replicas' queue group: each request reaches one of them."""
        return f"{self.prefix}-bot-service"

    # -- key-value buckets ----------------------------------------------------------------------
    @property
    def lobby_bucket(self) -> str:
        """The table service's lobby index."""
        return f"{self._name}_TABLES"

    @property
    def claims_bucket(self) -> str:
        """The bot service's seat claims."""
        return f"{self._name}_BOT_SEATS"

    @staticmethod
    def bucket_stream(bucket: str) -> str:
        """The stream JetStream keeps a key-value bucket in."""
        return f"KV_{bucket}"

    # -- connections ----------------------------------------------------------------------------
    def inbox_prefix(self, component: str) -> str:
        """A component's own reply inbox: no other user may subscribe to it."""
        return f"_INBOX_{self._name}_{component}"
