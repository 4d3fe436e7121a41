"""3-5-8: its rules, phases, determinization view and replay descriptions."""
