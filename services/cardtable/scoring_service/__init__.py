"""The scoring service: the table events projected into PostgreSQL, and served over gRPC.

Layers, each importing only those below it:

* ``messages`` (decode a stored event batch), ``rows`` (the projection's rows) and ``ratings``
  (which docs/rules.md rating rule applies to a finished game) are pure;
* ``projection`` folds decoded batches onto the rows, still pure;
* ``writer`` loads the rows a batch touches, folds, and writes rows and position in one
  transaction; ``consumer`` (the live JetStream consumer) and ``rebuild`` (the whole log again)
  both feed it;
* ``queries`` reads the projection for the ``servicer``; ``main`` wires everything.
"""
