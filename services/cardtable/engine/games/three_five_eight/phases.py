"""3-5-8's phases (docs/rules.md, 3-5-8), in the order a deal goes through them."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a 3-5-8 game is: waiting for a deal, in one of a deal's four steps, or over.

    The values are the phase names snapshots, observations, logs and views already hold.
    """

    DEAL = "deal"
    CONTRACT = "contract"
    EXCHANGE = "exchange"
    DISCARD = "discard"
    PLAY = "play"
    OVER = "over"
