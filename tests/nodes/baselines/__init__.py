"""The baselines CoT, ReAct, MAD and MADKE."""
