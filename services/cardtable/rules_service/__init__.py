"""The rules service: the engine behind gRPC, stateless, the one authority on game logic."""
