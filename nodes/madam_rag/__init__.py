"""MADAM-RAG: one agent per document, the aggregator, and the paper's baselines."""
