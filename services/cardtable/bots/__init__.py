"""Computer players: strategies that choose a seat's action from that seat's view alone."""
