"""Tests of factdebate.server and of the LangGraph servers that serve the methods."""
