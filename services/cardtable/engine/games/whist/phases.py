"""Whist's phases (docs/rules.md, Whist)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a Whist game is: waiting for a deal, bidding, playing the tricks, or over.

    The values are the phase names snapshots, observations, logs and views already hold.
    """

    DEAL = "deal"
    BID = "bid"
    PLAY = "play"
    OVER = "over"
