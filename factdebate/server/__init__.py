"""The LangGraph server's HTTP app."""
