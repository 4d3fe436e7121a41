"""Belote's phases (docs/rules.md, Belote)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a Belote game is: waiting for a deal, bidding for trump, playing, or over.

    The values are the phase names snapshots, observations, logs and views already hold.
    """

    DEAL = "deal"
    BID = "bid"
    PLAY = "play"
    OVER = "over"
