"""Settings of the Tool-MAD baselines that add to the shared ones: MAD, MADKE, ReAct."""

from __future__ import annotations

from dataclasses import dataclass, field

from factdebate.nodes.context import Context, ToolName, setting


@dataclass(kw_only=True)
class MADContext(Context):
    """MAD settings: the shared ones plus whether the judge may stop before the limit."""

    judge_each_round: bool = field(
        default=True,
        metadata={
            "description": "Judge after every round and stop once it decides; off = "
            "judge only after the round limit."
        },
    )


@dataclass(kw_only=True)
class MADKEContext(Context):
    """MADKE settings: which tool fills the shared evidence pool."""

    tool: ToolName = field(
        default="rag", metadata={"description": "Tool for the one shared retrieval: rag or search."}
    )


@dataclass(kw_only=True)
class ReactContext(Context):
    """ReAct settings: the agent's tool, its search budget, and query formulation."""

    tool: ToolName = field(
        default="rag", metadata={"description": "The agent's retrieval tool: rag or search."}
    )
    max_steps: int = setting(3, "Most searches the agent may run before answering.", 0, 20)
    query_formulation: bool = field(
        default=True,
        metadata={"description": "The agent writes its queries; off = one search with the claim."},
    )
