"""What a client of the table service does with its answers (shared by benchmarks and tests)."""
