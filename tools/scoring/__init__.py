"""Scores: RAGAS faithfulness and relevance, long-form factuality, answer sets."""
