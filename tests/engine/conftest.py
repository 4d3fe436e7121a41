"""Shared helpers for engine scenarios."""
