"""Every method, declared once: its graph, its settings, its paper and role, loaded lazily.

The command line, ``factdebate settings``, the docs, the LangGraph server's ``langgraph.json``
and the benchmark all read this catalog. Graphs and settings classes are named by
``module:attribute`` and imported only when asked for, so listing or checking one method
never imports another (a settings check imports no graph at all).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from factdebate.tools.core.errors import FactDebateError

PACKAGE = "factdebate.graphs"
InputKind = Literal["claim", "question", "answer"]
Role = Literal["method", "baseline", "ablation"]
CostClass = Literal["low", "medium", "high"]
COST_CLASSES: dict[str, str] = {
    "low": "low (one or two model calls per item)",
    "medium": "medium (a fixed handful of model calls: samples, votes or agent steps)",
    "high": "high (a multi-round debate of several agents: tens of model calls per item)",
}
"""What each cost class means, in model calls per item."""
INPUTS: dict[str, str] = {
    "claim": 'Input: {"claim": "<the claim to check>"}.',
    "question": 'Input: {"question": "<the question to answer>"}.',
    "answer": (
        'Input: {"question": "<the question>", "answer": "<the long answer to score>"}, '
        'optionally "references": [reference answers].'
    ),
}
CONTRACT_KEYS = (
    "verdict",
    "justification",
    "decided_by",
    "stop_reason",
    "rounds",
    "transcript",
    "cost",
    "errors",
)
"""The keys every method's result has (``factdebate.api.contract`` keeps these and extras)."""
OUTPUTS: dict[str, str] = {
    "claim": "a verdict label for the claim",
    "question": "the answers the documents support (answers; verdict joins them with ';')",
    "answer": "a factuality verdict for the answer with a score per checked claim",
}
PAPERS = {
    "tool-mad": "Tool-MAD",
    "madam-rag": "MADAM-RAG",
    "debate-cv": "DebateCV",
    "mad-fact": "MAD-Fact",
    "self-consistency": "Self-consistency",
    "escalate-tool-mad": "Escalation (a cheap screen first, the debate only where it is unsure)",
}
"""The paper behind each family of methods, by the name of its own method."""


@dataclass(frozen=True)
class MethodSpec:
    """One method: what it is, where its graph and settings live, and how it is used.

    Attributes:
        name: The name users type (``--method``) and the graph id a LangGraph server serves.
        graph: ``module:attribute`` of the compiled graph, the module under ``factdebate.graphs``.
        context: ``module:Class`` of its settings (a ``Context`` dataclass), under
            ``factdebate.nodes``.
        description: One line for ``factdebate methods`` and the docs.
        family: The method whose paper reports it (a key of ``PAPERS``).
        role: The paper's own method, one of its baselines, or one of its ablations.
        input_kind: What it reads: a claim, a question (answer lists) or a long answer.
        retrieves: Whether it reads evidence (a benchmark indexes a corpus only for those).
        defaults: Settings whose defaults differ from its context class's (ablations).
        derive: ``module:function`` under ``factdebate.nodes`` building this method's settings
            class from ``context``'s (a family run on top of another method: self-consistency
            adds ``k``); empty = ``context`` as it is.
        cost: Its cost class (``COST_CLASSES``): how many model calls one item takes.
        screens: An escalation method's method proper (the method it runs where its screen
            is unsure); empty for every other method.
        given: The input field through which a caller may hand it the evidence to read
            instead of retrieving (``evidence`` or ``documents``); empty: it takes none.
        extras: The result keys it returns beyond the shared contract (``CONTRACT_KEYS``).
    """

    name: str
    graph: str
    context: str
    description: str
    family: str
    role: Role = "method"
    input_kind: InputKind = "claim"
    retrieves: bool = True
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    derive: str = ""
    cost: CostClass = "high"
    screens: str = ""
    given: Literal["", "evidence", "documents"] = ""
    extras: tuple[str, ...] = ()

    @property
    def tool_description(self) -> str:
        """What a server says of it (MCP tool, A2A card): use, paper, input, output, cost."""
        paper = PAPERS[self.family]
        role = {
            "method": f"The method of the {paper} paper.",
            "baseline": f"A baseline the {paper} paper compares with, not a method of its own.",
            "ablation": f"An ablation of {paper} (one part changed or removed), for comparison.",
        }[self.role]
        if self.screens:
            role = (
                "The method of factdebate's escalation family: a cheap screen of the evidence "
                f"first, {self.screens} only where the screen's labels disagree."
            )
        if self.given:
            reads = (
                f'Optional "{self.given}": a list of documents ({{"id", "title", "text"}}) to '
                "read instead of retrieving. It retrieves evidence from the server's corpus "
                "when none is given"
            )
        elif self.retrieves:
            reads = "It retrieves its evidence itself (the server's corpus or web search)"
        else:
            reads = "It reads no evidence, only its input"
        keys = ", ".join((*CONTRACT_KEYS, *self.extras))
        return (
            f"{self.description}. {role} {INPUTS[self.input_kind]} {reads}. It returns "
            f"{OUTPUTS[self.input_kind]}: a JSON object with {keys} (factdebate's result "
            f"contract). Cost: {COST_CLASSES[self.cost]}."
        )

    @property
    def graph_module(self) -> str:
        """The dotted module holding the compiled graph."""
        return f"{PACKAGE}.{self.graph.partition(':')[0]}"

    @property
    def server_path(self) -> str:
        """The served graph as ``langgraph.json`` names it: ``./graphs/served.py:ATTRIBUTE``."""
        return f"./graphs/served.py:{self.name.replace('-', '_')}"

    def load_graph(self) -> Any:
        """The compiled graph (imports LangGraph and the method's nodes)."""
        module, _, attr = self.graph.partition(":")
        return getattr(importlib.import_module(f"{PACKAGE}.{module}"), attr)

    def context_class(self) -> Any:
        """The settings class (light: no graph, no model stack); see ``context_class``."""
        return context_class(self.name)


def _tool_mad_ablation(variant: str, what: str, **defaults: Any) -> MethodSpec:
    return MethodSpec(
        f"tool-mad-{variant}",
        f"tool_mad_ablations:{variant.replace('-', '_')}",
        "tool_mad.context:ToolMADContext",
        f"Tool-MAD ablation: {what}",
        family="tool-mad",
        role="ablation",
        defaults=MappingProxyType(defaults),
    )


_SAMPLED = "self_consistency.context:sampled_settings"
ESCALATION = "escalate-tool-mad"
"""The catalog family of the escalation methods (named by its first method)."""

_ALL = (
    MethodSpec(
        "tool-mad",
        "tool_mad:graph",
        "tool_mad.context:ToolMADContext",
        "Tool-MAD: RAG vs search debaters, RAGAS scores, judge",
        family="tool-mad",
    ),
    _tool_mad_ablation("rag-rag", "RAG + RAG debaters", tool_b="rag"),
    _tool_mad_ablation("search-search", "search + search debaters", tool_a="search"),
    _tool_mad_ablation("rag-vanilla", "RAG debater vs one without tools", tool_b="none"),
    _tool_mad_ablation(
        "search-vanilla", "search debater vs one without tools", tool_a="search", tool_b="none"
    ),
    _tool_mad_ablation(
        "vanilla-vanilla", "two debaters without tools", tool_a="none", tool_b="none"
    ),
    _tool_mad_ablation(
        "no-qf", "no query formulation, the claim is every query", query_formulation=False
    ),
    _tool_mad_ablation(
        "no-stability", "no stability score, agreement stops", stability_score=False
    ),
    MethodSpec(
        "cot",
        "cot:graph",
        "context:Context",
        "Baseline: zero-shot chain of thought, no evidence",
        family="tool-mad",
        role="baseline",
        retrieves=False,
        cost="low",
    ),
    MethodSpec(
        "react",
        "react_agent:graph",
        "baselines.context:ReactContext",
        "Baseline: single ReAct agent with retrieval",
        family="tool-mad",
        role="baseline",
        cost="medium",
    ),
    MethodSpec(
        "mad",
        "mad:graph",
        "baselines.context:MADContext",
        "Baseline: MAD affirmative vs negative, no retrieval, judge",
        family="tool-mad",
        role="baseline",
        retrieves=False,
    ),
    MethodSpec(
        "madke",
        "madke:graph",
        "baselines.context:MADKEContext",
        "Baseline: MADKE, one shared static retrieval, judge",
        family="tool-mad",
        role="baseline",
        extras=("evidence",),
    ),
    MethodSpec(
        "mad-fact",
        "mad_fact:graph",
        "mad_fact.context:MADFactContext",
        "MAD-Fact: clerk + role-played jury per claim, weighted long-form factuality scores",
        family="mad-fact",
        input_kind="answer",
        extras=("claims", "split_without_model", "dropped", "scores", "golden"),
    ),
    MethodSpec(
        "single-verifier",
        "single_verifier:graph",
        "mad_fact.context:SingleVerifierContext",
        "Baseline: SAFE-like single verifier, searches then rates",
        family="mad-fact",
        role="baseline",
        cost="medium",
    ),
    MethodSpec(
        "debate-cv",
        "debate_cv:graph",
        "debate_cv.context:DebateCVContext",
        "DebateCV: pro vs con debaters, moderator decides",
        family="debate-cv",
        given="evidence",
        extras=("evidence", "moderator_notes"),
    ),
    MethodSpec(
        "rag-cot",
        "rag_cot:graph",
        "debate_cv.context:RAGCoTContext",
        "Baseline: RAG-CoT, one model reads the evidence",
        family="debate-cv",
        role="baseline",
        cost="low",
        given="evidence",
        extras=("evidence",),
    ),
    MethodSpec(
        "majority",
        "majority:graph",
        "debate_cv.context:MajorityContext",
        "Baseline: 3 independent RAG-CoT votes, a model counts them",
        family="debate-cv",
        role="baseline",
        cost="medium",
        given="evidence",
        extras=("evidence",),
    ),
    MethodSpec(
        "cooperation",
        "cooperation:graph",
        "debate_cv.context:CooperationContext",
        "Baseline: CAMEL-style user directs a RAG-CoT assistant",
        family="debate-cv",
        role="baseline",
        cost="medium",
        given="evidence",
        extras=("evidence",),
    ),
    MethodSpec(
        "madam-rag",
        "madam_rag:graph",
        "madam_rag.context:MadamContext",
        "MADAM-RAG: one agent per document, aggregator",
        family="madam-rag",
        input_kind="question",
        given="documents",
        extras=("answers", "documents"),
    ),
    MethodSpec(
        "madam-no-rag",
        "madam_no_rag:graph",
        "madam_rag.context:MadamContext",
        "MADAM-RAG baseline: question only",
        family="madam-rag",
        role="baseline",
        input_kind="question",
        cost="low",
        given="documents",
        extras=("answers", "documents"),
    ),
    MethodSpec(
        "madam-concat-rag",
        "madam_concat_rag:graph",
        "madam_rag.context:MadamContext",
        "MADAM-RAG baseline: all documents in one prompt",
        family="madam-rag",
        role="baseline",
        input_kind="question",
        cost="low",
        given="documents",
        extras=("answers", "documents"),
    ),
    MethodSpec(
        "madam-self-reflect",
        "madam_self_reflect:graph",
        "madam_rag.context:MadamContext",
        "MADAM-RAG baseline: one agent, 2 review-and-refine rounds",
        family="madam-rag",
        role="baseline",
        input_kind="question",
        cost="medium",
        given="documents",
        extras=("answers", "documents"),
    ),
    MethodSpec(
        "self-consistency",
        "self_consistency:graph",
        "debate_cv.context:RAGCoTContext",
        "Self-consistency: k RAG-CoT samples over the debaters' evidence, majority vote",
        family="self-consistency",
        derive=_SAMPLED,
        cost="medium",
        given="evidence",
        extras=("evidence",),
    ),
    MethodSpec(
        "self-consistency-cot",
        "self_consistency_cot:graph",
        "context:Context",
        "Self-consistency: k chain-of-thought samples, no evidence, majority vote",
        family="self-consistency",
        role="baseline",
        retrieves=False,
        derive=_SAMPLED,
        cost="medium",
    ),
    MethodSpec(
        "self-consistency-qa",
        "self_consistency_qa:graph",
        "madam_rag.context:MadamContext",
        "Self-consistency: k all-documents answers (MADAM-RAG's concat baseline), vote on answers",
        family="self-consistency",
        role="baseline",
        input_kind="question",
        derive=_SAMPLED,
        cost="medium",
        given="documents",
        extras=("answers", "documents"),
    ),
    MethodSpec(
        "escalate-tool-mad",
        "escalate_tool_mad:graph",
        "tool_mad.context:ToolMADContext",
        "Escalating Tool-MAD: both debaters' first answers screen the claim; agreed = done, "
        "else the debate goes on from there",
        family=ESCALATION,
        derive="escalation.context:screened_settings",
        screens="tool-mad",
        extras=("screen",),
    ),
    MethodSpec(
        "escalate-debate-cv",
        "escalate_debate_cv:graph",
        "debate_cv.context:DebateCVContext",
        "Escalating DebateCV: k RAG-CoT readings of the evidence screen the claim; unanimous "
        "= done, else the debate over the same evidence",
        family=ESCALATION,
        derive="escalation.context:sampled_screen_settings",
        screens="debate-cv",
        given="evidence",
        extras=("evidence", "moderator_notes", "screen"),
    ),
    MethodSpec(
        "escalate-mad-fact",
        "escalate_mad_fact:graph",
        "mad_fact.context:MADFactContext",
        "Escalating MAD-Fact: the single verifier rates each atomic claim k times; the jury "
        "only for claims its ratings disagree on",
        family=ESCALATION,
        input_kind="answer",
        derive="escalation.context:sampled_screen_settings",
        screens="mad-fact",
        extras=("claims", "split_without_model", "dropped", "scores", "golden"),
    ),
)
METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in _ALL}
"""Every method by name, each family's own method first."""


class UnknownMethodError(FactDebateError, KeyError):
    """A method name that is not in the catalog."""

    def __str__(self) -> str:
        return f"unknown method {self.args[0]!r}; choose one of: {', '.join(sorted(METHODS))}"


def resolve(method: str | MethodSpec) -> MethodSpec:
    """The catalog entry of ``method`` (an entry is its own).

    Raises:
        UnknownMethodError: no such method.
    """
    if isinstance(method, MethodSpec):
        return method
    try:
        return METHODS[method]
    except KeyError:
        raise UnknownMethodError(method) from None


@cache
def context_class(name: str) -> Any:
    """The settings class of ``name``: its context, derived (``derive``), with its own defaults.

    An ablation's or derived class is named after it (``tool-mad-rag-rag`` ->
    ``ToolMadRagRagContext``) and built once, so its graph and the command line share it.
    """
    spec = resolve(name)
    module, _, attr = spec.context.partition(":")
    base = getattr(importlib.import_module(f"factdebate.nodes.{module}"), attr)
    class_name = "".join(part.title() for part in name.split("-")) + "Context"
    if spec.derive:
        module, _, attr = spec.derive.partition(":")
        derive = getattr(importlib.import_module(f"factdebate.nodes.{module}"), attr)
        base = derive(base, class_name, spec.description + ".")
    if not spec.defaults:
        return base
    from factdebate.nodes.context import with_defaults

    return with_defaults(base, class_name, spec.description + ".", **spec.defaults)


def load_method(method: str | MethodSpec) -> tuple[Any, Any]:
    """``(compiled graph, its settings class)`` of a method (imports its graph)."""
    graph = resolve(method).load_graph()
    return graph, graph.builder.context_schema


@cache
def served_graph(name: str) -> Any:
    """``name``'s compiled graph as a server serves it: its settings built by ``served``.

    LangGraph builds a run's settings from the run's context before any node runs, whatever
    route started the run, so every served run passes the operator policy there.
    """
    from factdebate.nodes.policy import served

    graph = resolve(name).load_graph()
    return graph.copy(update={"context_schema": served(graph.context_schema)})


def langgraph_graphs() -> dict[str, dict[str, str]]:
    """The ``graphs`` table of ``langgraph.json``: every method under its own name.

    Each entry's ``description`` becomes its assistant's description, which the server's
    ``/mcp`` tools and A2A agent cards show.
    """
    return {
        spec.name: {"path": spec.server_path, "description": spec.tool_description}
        for spec in METHODS.values()
    }
