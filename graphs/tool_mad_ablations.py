"""Tool-MAD ablations from the paper's Table VI and Figs. 9-10, each a graph of its own.

Every variant is the Tool-MAD graph with one setting's default changed, so it runs, draws and
serves (Studio, ``langgraph dev``) under its own name, and its settings form shows the change.
A debater with tool ``none`` is the paper's VANILLA agent.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from factdebate.graphs.registry import METHODS
from factdebate.graphs.tool_mad import make_builder
from factdebate.nodes.tool_mad.context import (
    ABLATIONS as ABLATIONS,  # re-exported: tests import it here
)
from factdebate.nodes.tool_mad.context import ablation_context


def _compile(method: str) -> CompiledStateGraph[Any, Any, Any, Any]:
    context = ablation_context(method, METHODS[method].description + ".")
    return make_builder(context).compile(name=method)


rag_rag = _compile("tool-mad-rag-rag")
search_search = _compile("tool-mad-search-search")
rag_vanilla = _compile("tool-mad-rag-vanilla")
search_vanilla = _compile("tool-mad-search-vanilla")
vanilla_vanilla = _compile("tool-mad-vanilla-vanilla")
no_qf = _compile("tool-mad-no-qf")
no_stability = _compile("tool-mad-no-stability")
