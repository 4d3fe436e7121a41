"""Typed errors of the engine.

Two kinds, because callers answer them differently: an :class:`IllegalAction` is a move the
rules forbid (the rules service maps it to FAILED_PRECONDITION and passes the message to the
player), an :class:`InvalidInput` is data that is not well formed at all (INVALID_ARGUMENT).
"""


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class IllegalAction(EngineError):
    """A well-formed action the rules do not allow now; the message speaks to the player."""


class InvalidInput(EngineError):
    """Input that is malformed: an unknown card, a bad deck order, a corrupt snapshot or record."""
