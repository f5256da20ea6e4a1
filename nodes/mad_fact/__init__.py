"""MAD-Fact: the clerk, the role-played jury, the scores; the single-verifier baseline."""
