"""Self-consistency: k independent samples of a single-agent method, then a majority vote."""
