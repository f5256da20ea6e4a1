"""Tool-MAD ablations from the paper's Table VI and Figs. 9-10, each a graph of its own.

Every variant is the Tool-MAD graph with one setting's default changed (the catalog entry's
``defaults``), so it runs, draws and serves (Studio, ``langgraph dev``) under its own name,
and its settings form shows the change. A debater with tool ``none`` is the paper's VANILLA
agent.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from factdebate.graphs.registry import context_class
from factdebate.graphs.tool_mad import make_builder


def _compile(method: str) -> CompiledStateGraph[Any, Any, Any, Any]:
    return make_builder(context_class(method)).compile(name=method)


rag_rag = _compile("tool-mad-rag-rag")
search_search = _compile("tool-mad-search-search")
rag_vanilla = _compile("tool-mad-rag-vanilla")
search_vanilla = _compile("tool-mad-search-vanilla")
vanilla_vanilla = _compile("tool-mad-vanilla-vanilla")
no_qf = _compile("tool-mad-no-qf")
no_stability = _compile("tool-mad-no-stability")
