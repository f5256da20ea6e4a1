"""Tool-MAD: its graph, its fidelity to the paper, and a capable model's recorded run."""
