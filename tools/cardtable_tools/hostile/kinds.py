"""The kinds of hostile request, and the status codes each must be answered with.

A kind's expected set is what a correct service may answer, never "anything but a crash":
UNKNOWN, INTERNAL and UNAVAILABLE are never expected, and OK only where a hostile request is
still a valid one (a replayed command is answered from the log; a tampered snapshot that stays
consistent is just another game state to a stateless rules service).

A flood is one request made of many calls, past one of the table service's quotas
(``floods``): its calls within the quota get what such a call gets, the rest
RESOURCE_EXHAUSTED; what else each refusal must carry, the flood itself checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpc import StatusCode

OK = StatusCode.OK
INVALID = StatusCode.INVALID_ARGUMENT
UNAUTHENTICATED = StatusCode.UNAUTHENTICATED
DENIED = StatusCode.PERMISSION_DENIED
NOT_FOUND = StatusCode.NOT_FOUND
PRECONDITION = StatusCode.FAILED_PRECONDITION
ABORTED = StatusCode.ABORTED
EXHAUSTED = StatusCode.RESOURCE_EXHAUSTED


@dataclass(frozen=True)
class Kind:
    """One kind of hostile request."""

    name: str
    expected: frozenset[StatusCode]
    #: Relative frequency in a run; expensive kinds (megabytes per request) are rarer.
    weight: int
    description: str
    #: Many calls past a quota, sent to the replica that floods go to (``flood_replica``).
    flood: bool = False


KINDS: tuple[Kind, ...] = (
    Kind("garbage_bytes", frozenset({INVALID}), 6, "bytes that are no valid message"),
    Kind("malformed_fields", frozenset({INVALID}), 8, "bad ids, strings, seats, games, options"),
    Kind("unknown_table", frozenset({NOT_FOUND}), 5, "well-formed ids of no table"),
    Kind("missing_token", frozenset({UNAUTHENTICATED}), 5, "no or malformed authorization"),
    Kind("forged_token", frozenset({UNAUTHENTICATED}), 5, "signed with another key or none"),
    Kind("expired_token", frozenset({UNAUTHENTICATED}), 4, "right key, expired"),
    Kind("bad_claims", frozenset({UNAUTHENTICATED}), 4, "right key, claims missing or wrong"),
    Kind("other_seat", frozenset({DENIED}), 6, "own token, another seat's move or view"),
    Kind("replayed_token", frozenset({DENIED}), 5, "another player's real token"),
    Kind("out_of_turn", frozenset({PRECONDITION}), 6, "a seat that is not to act"),
    Kind("out_of_phase", frozenset({PRECONDITION}), 6, "an action or call the phase forbids"),
    Kind("illegal_card", frozenset({PRECONDITION}), 6, "cards the seat may not play or pass"),
    Kind("stale_version", frozenset({ABORTED}), 3, "a legal move at an old table version"),
    Kind("replayed_command", frozenset({OK}), 3, "a command already applied, sent again"),
    Kind(
        "reused_command_id",
        frozenset({StatusCode.ALREADY_EXISTS}),
        3,
        "an applied command's id with another action",
    ),
    Kind(
        "borrowed_identity",
        frozenset({UNAUTHENTICATED}),
        4,
        "a computer seat's or a confusable id, or two tokens",
    ),
    Kind("oversized_settings", frozenset({INVALID}), 3, "timers, waits, strategies out of bounds"),
    Kind("size_limits", frozenset({INVALID, PRECONDITION}), 4, "fields at and past limits"),
    Kind("near_transport_limit", frozenset({INVALID}), 1, "a message just under 4 MiB"),
    Kind("over_transport_limit", frozenset({EXHAUSTED}), 1, "a message just over 4 MiB"),
    Kind("garbage_snapshot", frozenset({INVALID}), 8, "rules calls with broken game states"),
    Kind(
        "tampered_snapshot",
        frozenset({OK, INVALID, PRECONDITION}),
        4,
        "real game states with one value changed",
    ),
    Kind(
        "forged_reference",
        frozenset({NOT_FOUND, INVALID}),
        4,
        "states by a reference never made, or malformed",
    ),
    Kind("rules_malformed", frozenset({INVALID, PRECONDITION}), 5, "bad games, decks, inputs"),
    Kind(
        "mutation_flood",
        frozenset({DENIED, EXHAUSTED}),
        1,
        "one player's moves at another's seat, in bursts past the token bucket",
        flood=True,
    ),
    Kind(
        "open_tables_flood",
        frozenset({OK, EXHAUSTED}),
        1,
        "one player creating tables past the open tables allowed",
        flood=True,
    ),
    Kind(
        "seats_flood",
        frozenset({OK, EXHAUSTED}),
        1,
        "one player taking seats at others' tables past the seats allowed",
        flood=True,
    ),
    Kind(
        "player_watch_flood",
        frozenset({OK, EXHAUSTED}),
        1,
        "one player's watch streams past the per-player limit",
        flood=True,
    ),
    Kind(
        "anonymous_watch_flood",
        frozenset({OK, EXHAUSTED}),
        1,
        "watch streams without a token past the replica's anonymous cap",
        flood=True,
    ),
    Kind(
        "replica_watch_flood",
        frozenset({OK, EXHAUSTED}),
        1,
        "players' watch streams past the replica's cap",
        flood=True,
    ),
)
FLOOD_KINDS = tuple(kind for kind in KINDS if kind.flood)
KINDS_BY_NAME = {kind.name: kind for kind in KINDS}
#: Answers that mean the server failed, whatever the request was.
NEVER_EXPECTED = frozenset(
    {StatusCode.UNKNOWN, StatusCode.INTERNAL, StatusCode.UNAVAILABLE, StatusCode.DATA_LOSS}
)
