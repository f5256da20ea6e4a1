"""Tool-MAD: query, retrieve, argue, score per debater; consensus check; judge."""
