"""Hearts' phases (docs/rules.md, Hearts)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a Hearts game is: waiting for a deal, choosing cards to pass, playing, or over.

    The values are the phase names snapshots, observations, logs and views already hold.
    """

    DEAL = "deal"
    PASS = "pass"
    PLAY = "play"
    OVER = "over"
