"""Fact verification by multi-agent LLM debate over evidence, as LangGraph graphs."""

from factdebate.tools.core.errors import FactDebateError

__all__ = ["FactDebateError"]
