"""Corpora, encoders and the index: ingest, dense and lexical search, ranking."""
