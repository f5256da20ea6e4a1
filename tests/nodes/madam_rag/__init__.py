"""MADAM-RAG and its baselines: the graph and its fidelity to the paper."""
