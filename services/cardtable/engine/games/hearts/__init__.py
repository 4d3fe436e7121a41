"""Hearts: its rules, phases, determinization view and replay descriptions."""
