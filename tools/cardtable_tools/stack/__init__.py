"""Running the whole system locally: service processes started, health-checked and stopped."""
