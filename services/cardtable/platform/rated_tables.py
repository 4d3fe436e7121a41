"""Whether a table's game moves ratings, as its log says: the one reading of ``TableCreated.rated``.

The table service decides it when the table is created (table_service/rated.py) and records it
in the event; every reader (the table service's own fold and lobby, the scoring projection)
takes it from there, never from the deployment's bounds of the day, so that a projection
rebuilt later reads the same answer.

Logs written before the field existed do not hold it. Every game was rated then, so such a
table reads as rated:

>>> from cardtable_api.events.v1 import events_pb2
>>> table_is_rated(events_pb2.TableCreated(game="whist"))
True
>>> table_is_rated(events_pb2.TableCreated(game="whist", rated=False))
False
"""

from __future__ import annotations

from cardtable_api.events.v1 import events_pb2

#: What a table whose ``TableCreated`` predates the field is: rated, as every game was then.
RATED_WHEN_UNRECORDED = True


def table_is_rated(created: events_pb2.TableCreated) -> bool:
    """The table's recorded decision, or ``RATED_WHEN_UNRECORDED`` for an older log."""
    return created.rated if created.HasField("rated") else RATED_WHEN_UNRECORDED
