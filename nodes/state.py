"""State types every method shares: a debate turn, the result contract, the claim input."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from tools.records import ErrorRecord, Evidence, RoleCost, add_costs

MODEL_FAILURE = "model_failure"  # stop reason of a run whose every agent call failed: no answer


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
