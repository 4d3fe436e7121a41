"""Benchmarks against real servers: table-service load, raw limits of the machine."""
