"""The rules engine: pure, I/O-free game logic for Whist, 3-5-8, Belote and Hearts.

No asyncio, gRPC, database, clock or random generator lives here: deck orders come in as data
and every result comes out as facts, so services, bots, replay and audit all share one copy of
the rules. Each game is one package under ``engine/games``
(docs/architecture.md#adding-a-game); start from :func:`cardtable.engine.registry.game_spec`.
"""
