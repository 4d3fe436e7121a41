"""The rules service's settings: the server's, and how many game states it keeps for references.

``RULES_STATE_MEMO_SIZE`` (default 20,000) bounds the states a replica holds for the table
service's references (rules.proto, GameState), about 2-3 KiB each. A replica serving more tables
in play than that evicts the oldest, and their next move costs a rebuild from the log
(``rules_states_evicted_total`` then climbs): raise it, or add replicas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from cardtable.platform.settings import EnvReader, ServerSettings, load

DEFAULT_STATE_MEMO_SIZE = 20_000


@dataclass(frozen=True)
class RulesSettings:
    server: ServerSettings
    state_memo_size: int

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        return cls(
            server=ServerSettings.read(env),
            state_memo_size=env.integer(
                "RULES_STATE_MEMO_SIZE",
                default=DEFAULT_STATE_MEMO_SIZE,
                minimum=1,
                maximum=10_000_000,
            ),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read every setting, failing fast with all problems at once."""
        return load(env, cls.read)
