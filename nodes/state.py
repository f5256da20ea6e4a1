"""State types every method shares: a debate turn, the result contract, the claim input."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Annotated, Any

from typing_extensions import TypedDict

from factdebate.tools.core.records import ErrorRecord, Evidence, RoleCost, add_costs

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
    relevance_encoder: str  # Tool-MAD: the encoder that computed answer_relevance
    reasoning: str  # result contract only: ``answer`` without its label line (for display)


class DecidedBy(TypedDict, total=False):
    """Provenance of a verdict: which agent gave it, after which round, and why."""

    agent: str  # judge, moderator, aggregator, jury, debaters, ... (who gave the verdict)
    round: int  # the round after which it was given (0: before any round)
    reason: str  # equals stop_reason: consensus, round_limit, moderator, answers_stable, ...
    detail: str  # the reason in words, with the scores or votes it rests on
    scores: dict[str, dict[str, float | None]]  # per debater, when scores were part of it


def decided(
    agent: str,
    round_no: int,
    reason: str,
    detail: str,
    scores: dict[str, dict[str, float | None]] | None = None,
) -> DecidedBy:
    """The ``decided_by`` record of a verdict (``scores`` only where scores were part of it)."""
    record = DecidedBy(agent=agent, round=round_no, reason=reason, detail=detail)
    if scores is not None:
        record["scores"] = scores
    return record


class DebateOutput(TypedDict, total=False):
    """Keys every method returns (the shared result contract)."""

    verdict: str | None
    justification: str
    decided_by: DecidedBy
    review: dict[str, Any]  # a person's approval or overruling (nodes/review.py), when asked
    proposed_verdict: str | None  # with review: the method's verdict, held until a person decides
    stop_reason: str
    rounds: int
    transcript: Annotated[list[Turn], operator.add]
    cost: Annotated[dict[str, RoleCost], add_costs]
    errors: Annotated[list[ErrorRecord], operator.add]


class ClaimInput(TypedDict):
    """Input of the claim-verification methods."""

    claim: str


def fallback_decided_by(state: Mapping[str, Any]) -> DecidedBy:
    """``decided_by`` of a state that recorded none (a run saved before provenance existed).

    ``agent`` is empty: the state does not say who decided.
    """
    reason = str(state.get("stop_reason") or "")
    return decided("", int(state.get("rounds") or 0), reason, f"stop reason {reason or 'none'}")
