"""Games back from their records: for people (``replay``) and for machines (``audit``).

Layering: this package sits on the engine and never below it. Every view is rebuilt by
re-applying a record's inputs with :func:`cardtable.engine.replay.replay` and reading the
engine's own ``observation(seat)`` and facts (filtered by their audience), so a seat's view
holds exactly what the engine would have shown that seat at the time and nothing taken from the
raw deck.

* :mod:`~cardtable.replay.session`: step through a record from a viewpoint (one seat, a
  spectator, or all hands open).
* :mod:`~cardtable.replay.render`: turn those steps into rich renderables (cards with suit
  symbols and colours, tricks, bids, scores).
* :mod:`~cardtable.replay.show`: print a whole game, or step through it trick by trick.
* :mod:`~cardtable.replay.audit`: check every recorded result and shuffle proof; a library the
  event-log export can feed.
"""
