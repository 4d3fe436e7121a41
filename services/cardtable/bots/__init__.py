"""Computer players: strategies that choose a seat's action from that seat's view alone.

* :mod:`~cardtable.bots.strategy`: the interface (``choose(observation, rng) -> action text``)
  and the ``random`` baseline;
* :mod:`~cardtable.bots.rules`: the rule-based player of each game, written on the engine's
  state and reading only what the seat may know; :mod:`~cardtable.bots.rules_based` is the
  ``rules`` strategy around it;
* :mod:`~cardtable.bots.determinize`: random deals consistent with a seat's view, built through
  the engine (:mod:`cardtable.engine.determinize` says what is hidden and where it may be);
* :mod:`~cardtable.bots.search`: the ``search`` strategy, determinized Monte Carlo within a time
  budget per move;
* :mod:`~cardtable.bots.registry`: strategies by name; :mod:`~cardtable_tools.tournament`:
  duplicate tournaments between them (``cardtable tournament``).
"""
