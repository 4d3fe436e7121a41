"""Reading the table event log: turning a table's batches into a game record, and checking a log."""
