"""Tool-MAD's baselines: zero-shot CoT, ReAct, MAD (Liang et al.) and MADKE."""
