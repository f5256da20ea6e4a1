"""MAD-Fact and the single verifier: the graph and its fidelity to the paper."""
