"""The parity fixtures of tests/data and the torch reference models they come from (`python3 -m tools.parity.NAME`)."""
