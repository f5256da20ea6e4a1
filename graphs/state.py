"""State types and reducers shared by every method's graph (the result contract)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from tools.evidence import Evidence


class RoleCost(TypedDict):
    """LLM usage of one role."""

    llm_calls: int
    input_tokens: int
    output_tokens: int


class ErrorRecord(TypedDict, total=False):
    """A recorded failure: parse failures, tool errors, timeouts. Never silently dropped."""

    round: int
    agent: str
    stage: str
    kind: str
    message: str
    raw: str


class Turn(TypedDict, total=False):
    """What one agent did in one round."""

    round: int
    agent: str
    tool: str
    query: str
    evidence: list[Evidence]
    answer: str
    label: str | None
    faithfulness: float | None
    answer_relevance: float | None


def add_costs(left: dict[str, RoleCost], right: dict[str, RoleCost]) -> dict[str, RoleCost]:
    """Sum per-role usage counters and keep a running ``total`` (reducer for ``cost``)."""
    merged: dict[str, RoleCost] = {role: RoleCost(**usage) for role, usage in (left or {}).items()}
    for role, usage in (right or {}).items():
        if role == "total":
            continue
        for key in (role, "total"):
            have = merged.setdefault(key, RoleCost(llm_calls=0, input_tokens=0, output_tokens=0))
            have["llm_calls"] += int(usage["llm_calls"])
            have["input_tokens"] += int(usage["input_tokens"])
            have["output_tokens"] += int(usage["output_tokens"])
    return merged


def merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Shallow-merge two dicts, right winning (reducer for per-agent scratch channels)."""
    return {**(left or {}), **(right or {})}


class DebateOutput(TypedDict, total=False):
    """Keys every method returns (the shared result contract)."""

    verdict: str | None
    justification: str
    stop_reason: str
    rounds: int
    transcript: Annotated[list[Turn], operator.add]
    cost: Annotated[dict[str, RoleCost], add_costs]
    errors: Annotated[list[ErrorRecord], operator.add]


class ClaimInput(TypedDict):
    """Input of the claim-verification methods."""

    claim: str


class ToolMADState(DebateOutput, total=False):
    """Tool-MAD working state: the claim, the round counter and each debater's turn so far."""

    claim: str
    round: int
    drafts: Annotated[dict[str, Turn], merge_dicts]
    decision: str
