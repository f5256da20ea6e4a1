"""MADAM-RAG state, per-agent ``Send`` payload and result contract."""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

from factdebate.nodes.state import DebateOutput, Turn
from factdebate.tools.core.records import Evidence


class QuestionInput(TypedDict):
    """Input of the question-answering methods; documents are retrieved when absent."""

    question: str
    documents: NotRequired[list[Evidence]]


class AgentTurn(Turn, total=False):
    """A document agent's or the aggregator's turn, with what it read and wrote."""

    document_id: str
    explanation: str
    answers: list[str]
    order: list[str]


class MadamOutput(DebateOutput, total=False):
    """The shared contract plus the answer list and the documents the agents represented.

    ``verdict`` is ``"; ".join(answers)``, ``"unknown"`` when the final answer names no
    answer, and ``None`` when the final answer could not be read (see ``errors``).
    """

    answers: list[str]
    documents: list[Evidence]


class MadamState(MadamOutput, total=False):
    """Working state: the question, the round counter and a per-run key."""

    question: str
    round: int
    run_key: str
    last_answers: list[str] | None
    last_explanation: str


class AgentTask(TypedDict):
    """What one document agent receives through ``Send``."""

    run_key: str
    agent: str
    document: Evidence
    question: str
    round: int
    previous_answers: list[str] | None
    previous_explanation: str | None
    round_input: str
    other_responses: list[AgentTurn]


class ReflectState(MadamState, total=False):
    """Self-reflection baseline working state: the latest critique of the answer."""

    critique: str
