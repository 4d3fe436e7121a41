"""The games, one package each: everything game-specific the engine knows lives in its folder.

Each package defines ``GAME``, a :class:`~cardtable.engine.definition.GameDefinition` that
:mod:`cardtable.engine.registry` lists; docs/architecture.md#adding-a-game says what a new one
needs.
"""
