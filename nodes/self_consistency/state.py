"""Self-consistency state: the inputs the sampled method reads, the samples, the contract."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from factdebate.nodes.state import DebateOutput
from factdebate.tools.core.records import Evidence

SAMPLES_FAILED = "samples_failed"
"""The stop reason of an item most of whose samples brought no reply: a failed item."""
INPUT_KEYS = ("claim", "question", "evidence", "documents")
"""What a sample receives from the prepared state (the keys that are present)."""


class Sample(TypedDict, total=False):
    """One sample's outcome: its number, its verdict (None: unreadable) and its reasoning."""

    sample: int  # 1-based, fixed at fan-out (not the order samples finish in)
    verdict: str | None
    answers: list[str]  # answer datasets: the answer list behind ``verdict``
    justification: str
    failed: bool  # its model call brought no reply (timed out, refused, rate limited)


class SampleTask(TypedDict):
    """What one sample receives through ``Send``: its number and the sampled method's input."""

    sample: int
    inputs: dict[str, Any]


class SelfConsistencyState(DebateOutput, total=False):
    """Working state of every self-consistency graph (claims or questions)."""

    claim: str
    question: str
    evidence: list[Evidence]
    documents: list[Evidence]
    answers: list[str]
    samples: Annotated[list[Sample], operator.add]
    # written by MADAM-RAG's prepare step, unused here
    round: int
    run_key: str
    last_answers: list[str] | None
    last_explanation: str
