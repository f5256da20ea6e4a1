"""MAD-Fact state: the answer-level graph, the per-claim jury, their results."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from factdebate.nodes.state import DebateOutput, Turn
from factdebate.tools.core.records import ErrorRecord, Evidence, RoleCost, add_costs


class JuryTurn(Turn, total=False):
    """One juror's turn on one claim: how it chose to answer, and its opinion."""

    claim_id: int
    strategy: str
    confidence: float | None


class KnowledgeEntry(TypedDict):
    """One search run by the jury: the query and what came back (shared by all jurors)."""

    query: str
    agent: str
    round: int
    evidence: list[Evidence]


class ClaimResult(TypedDict, total=False):
    """The jury's decision on one claim."""

    claim_id: int
    claim: str
    verdict: Literal["TRUE", "FALSE"] | None
    votes: dict[str, int]
    tie_break: bool
    rounds: int
    stop_reason: str
    queries: list[str]
    weight: int


class JuryInput(TypedDict, total=False):
    """What the jury receives: one claim (and its position in the answer)."""

    claim: str
    claim_id: int
    question: str
    spent_before: dict[str, RoleCost]  # the whole answer's spending when this jury was sent


class ClaimTask(TypedDict):
    """What the claim pool receives through ``Send``: one claim and the run it belongs to."""

    claim: str
    claim_id: int
    question: str
    run_key: str
    spent_before: dict[str, RoleCost]  # the answer's spending (clerk, references) at dispatch


class JuryOutput(TypedDict, total=False):
    """What the jury hands back (merged into the answer-level state by reducers)."""

    claim_results: Annotated[list[ClaimResult], operator.add]
    transcript: Annotated[list[JuryTurn], operator.add]
    cost: Annotated[dict[str, RoleCost], add_costs]
    errors: Annotated[list[ErrorRecord], operator.add]


class JuryState(JuryInput, JuryOutput, total=False):
    """Working state of one claim's debate."""

    round: int
    speaker: int
    decision: str
    strategy: str
    confidence: float | None
    turn_query: str
    turn_evidence: list[Evidence]
    knowledge: Annotated[list[KnowledgeEntry], operator.add]
    stop_reason: str
    rounds: int


class AnswerInput(TypedDict, total=False):
    """Input of MAD-Fact: a question, the long answer to score, optional reference answers."""

    question: str
    answer: str
    references: list[str]


class MADFactOutput(DebateOutput, total=False):
    """The result contract plus per-claim verdicts and the answer's scores."""

    claims: list[ClaimResult]
    split_without_model: bool  # the clerk's output was unreadable: claims are its sentences
    dropped: list[str]
    scores: dict[str, Any]
    golden: list[dict[str, Any]]


class MADFactStream(MADFactOutput, total=False):
    """What the graph streams: the contract plus the references, the claims, each jury's result.

    ``references`` (given, or written by the expert models) appears after
    ``write_references``, ``claim_texts`` and ``reference_claims`` when the clerk finishes,
    ``claim_results`` grows as each claim's jury finishes (with its jurors' turns in
    ``transcript``); the contract drops them all.
    """

    references: list[str]
    claim_texts: list[str]
    reference_claims: list[list[str]]
    claim_results: Annotated[list[ClaimResult], operator.add]


class MADFactState(AnswerInput, MADFactStream, total=False):
    """Answer-level working state."""

    run_key: str


class VerifierOutput(DebateOutput, total=False):
    """The contract plus the searches so far (streamed after each search)."""

    knowledge: list[KnowledgeEntry]


class VerifierState(VerifierOutput, total=False):
    """The claim, the searches so far and how many steps were used."""

    claim: str
    steps: int
    budget: int
