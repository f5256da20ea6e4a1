"""State of DebateCV and its evidence-based baselines (RAG-CoT, Majority, Cooperation)."""

from __future__ import annotations

import operator
from typing import Annotated, Required

from typing_extensions import TypedDict

from factdebate.nodes.state import DebateOutput, Turn
from factdebate.tools.core.records import Evidence


class EvidenceClaimInput(TypedDict, total=False):
    """A claim plus, optionally, the evidence set to use (retrieved when absent or empty)."""

    claim: Required[str]
    evidence: list[Evidence] | None


class ModeratorNote(TypedDict, total=False):
    """The moderator's structured assessment of one round (or of the final-verdict step)."""

    round: int
    new_insight: str
    evidence_gaps: str
    proceed: bool
    reason: str
    verdict: str | None
    justification: str


class EvidenceOutput(DebateOutput, total=False):
    """Result contract plus the evidence set the method actually read."""

    evidence: list[Evidence]


class DebateCVOutput(EvidenceOutput, total=False):
    """DebateCV result: the contract, the evidence and the moderator's notes per round."""

    moderator_notes: Annotated[list[ModeratorNote], operator.add]


class DebateCVState(DebateCVOutput, total=False):
    """DebateCV working state."""

    claim: str
    round: int
    decision: str


class RAGCoTState(EvidenceOutput, total=False):
    """RAG-CoT / Majority working state; ``votes`` collects the voters' turns."""

    claim: str
    votes: Annotated[list[Turn], operator.add]


class VotePayload(TypedDict):
    """What one Majority voter receives through ``Send``."""

    claim: str
    evidence: list[Evidence]
    voter: int


class CooperationState(RAGCoTState, total=False):
    """Cooperation baseline working state: the exchange counter and the next step."""

    round: int
    decision: str
