"""Tests of factdebate.tools.retrieval: embeddings, encoders, ingestion, indexes, ranking."""
