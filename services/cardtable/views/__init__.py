"""A seat's view as the typed ``cardtable.common.v1.SeatView`` message, both ways.

The engine's ``observation(seat)`` is a plain dict (the engine knows nothing of protobuf). The
rules service turns it into a message with :func:`~cardtable.views.encode.encode_view`; a reader
that wants the engine's dict back (the bots, which rebuild a state from it) uses
:func:`~cardtable.views.decode.decode_view`. The two are exact inverses, so a bot decides from
the same dict whether it reads the wire or plays in-process (tests/views/test_round_trip.py).
"""
