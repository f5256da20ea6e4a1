"""One compiled LangGraph graph per method and baseline, plus shared state and settings."""
