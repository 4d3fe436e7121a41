"""Engine-only simulation: random playouts, invariant checks and throughput measurement.

The engine never draws randomness; this package owns the random generator and feeds the
engine deck orders and choices, so the same playout code serves the ``simulate`` command,
the benchmark, the property tests and the random bot.
"""
