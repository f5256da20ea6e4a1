"""Method name -> compiled graph, loaded lazily so one method's imports never slow another."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MethodSpec:
    """Where a method's graph lives and what it takes."""

    module: str
    description: str
    input_kind: str = "claim"  # claim | question | answer
    attr: str = "graph"  # the compiled graph's name in ``module``


METHODS: dict[str, MethodSpec] = {
    "tool-mad": MethodSpec(
        "factdebate.graphs.tool_mad", "Tool-MAD: RAG vs search debaters, RAGAS scores, judge"
    ),
    **{  # graphs/tool_mad_ablations.py names each graph after its variant: rag-rag -> rag_rag
        f"tool-mad-{variant}": MethodSpec(
            "factdebate.graphs.tool_mad_ablations",
            f"Tool-MAD ablation: {what}",
            attr=variant.replace("-", "_"),
        )
        for variant, what in (
            ("rag-rag", "RAG + RAG debaters"),
            ("search-search", "search + search debaters"),
            ("rag-vanilla", "RAG debater vs one without tools"),
            ("search-vanilla", "search debater vs one without tools"),
            ("vanilla-vanilla", "two debaters without tools"),
            ("no-qf", "no query formulation, the claim is every query"),
            ("no-stability", "no stability score, agreement stops"),
        )
    },
    "cot": MethodSpec("factdebate.graphs.cot", "Baseline: zero-shot chain of thought, no evidence"),
    "react": MethodSpec(
        "factdebate.graphs.react_agent", "Baseline: single ReAct agent with retrieval"
    ),
    "mad": MethodSpec(
        "factdebate.graphs.mad", "Baseline: MAD affirmative vs negative, no retrieval, judge"
    ),
    "madke": MethodSpec(
        "factdebate.graphs.madke", "Baseline: MADKE, one shared static retrieval, judge"
    ),
    "mad-fact": MethodSpec(
        "factdebate.graphs.mad_fact",
        "MAD-Fact: clerk + role-played jury per claim, weighted long-form factuality scores",
        input_kind="answer",
    ),
    "single-verifier": MethodSpec(
        "factdebate.graphs.single_verifier",
        "Baseline: SAFE-like single verifier, searches then rates",
    ),
    "debate-cv": MethodSpec(
        "factdebate.graphs.debate_cv", "DebateCV: pro vs con debaters, moderator decides"
    ),
    "rag-cot": MethodSpec(
        "factdebate.graphs.rag_cot", "Baseline: RAG-CoT, one model reads the evidence"
    ),
    "majority": MethodSpec(
        "factdebate.graphs.majority", "Baseline: 3 independent RAG-CoT votes, a model counts them"
    ),
    "cooperation": MethodSpec(
        "factdebate.graphs.cooperation", "Baseline: CAMEL-style user directs a RAG-CoT assistant"
    ),
    "madam-rag": MethodSpec(
        "factdebate.graphs.madam_rag",
        "MADAM-RAG: one agent per document, aggregator",
        input_kind="question",
    ),
    "madam-no-rag": MethodSpec(
        "factdebate.graphs.madam_no_rag", "MADAM-RAG baseline: question only", input_kind="question"
    ),
    "madam-concat-rag": MethodSpec(
        "factdebate.graphs.madam_concat_rag",
        "MADAM-RAG baseline: all documents in one prompt",
        input_kind="question",
    ),
    "madam-self-reflect": MethodSpec(
        "factdebate.graphs.madam_self_reflect",
        "MADAM-RAG baseline: one agent, 2 review-and-refine rounds",
        input_kind="question",
    ),
}


class UnknownMethodError(KeyError):
    """A method name that is not registered."""

    def __str__(self) -> str:
        return f"unknown method {self.args[0]!r}; choose one of: {', '.join(sorted(METHODS))}"


def load_method(name: str) -> tuple[Any, Any]:
    """Return ``(compiled graph, context class)`` of a registered method."""
    if name not in METHODS:
        raise UnknownMethodError(name)
    spec = METHODS[name]
    graph = getattr(importlib.import_module(spec.module), spec.attr)
    return graph, graph.builder.context_schema
