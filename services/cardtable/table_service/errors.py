"""Typed errors of the table service; the servicer maps each to one gRPC status code."""


class TableError(Exception):
    """Base of the table service's deliberate errors; the message is for the caller."""


class BadRequestError(TableError):
    """Malformed input: INVALID_ARGUMENT."""


class NotAuthenticatedError(TableError):
    """Missing, malformed, expired or forged token: UNAUTHENTICATED."""


class PermissionDeniedError(TableError):
    """The caller may not act for that seat or see that view: PERMISSION_DENIED."""


class TableNotFoundError(TableError):
    """No table with that id: NOT_FOUND."""


class RuleViolationError(TableError):
    """The rules (or the table's state) forbid the command now: FAILED_PRECONDITION."""


class ConcurrencyConflictError(TableError):
    """Another command changed the table first, and retrying did not help: ABORTED."""


class DependencyUnavailableError(TableError):
    """The rules service or NATS cannot be reached: UNAVAILABLE."""


class GameStateLostError(DependencyUnavailableError):
    """The rules replica no longer holds the state a reference named (it restarted, another
    replica answered, or a discarded decision retired it): the table rebuilds it from its
    inputs. UNAVAILABLE only if that rebuild fails too."""


class LogTamperedError(TableError):
    """A batch of the table's log failed verification; the table is read-only: DATA_LOSS."""


class CommandReusedError(TableError):
    """A command id already used on the table for a different command: ALREADY_EXISTS."""
