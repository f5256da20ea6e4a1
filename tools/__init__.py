"""What agents reach outside themselves: models, embeddings, indexes, search, scoring."""
