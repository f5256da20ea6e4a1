"""DebateCV, RAG-CoT, Majority and Cooperation: the graphs and their fidelity to the paper."""
