"""factdebate: fact verification by multi-agent LLM debate (CLI, API, benchmarks)."""
