"""cardtable: an event-sourced backend for online trick-taking card games."""
