"""Working state of the Tool-MAD baselines: CoT, MAD, MADKE and ReAct."""

from __future__ import annotations

from nodes.state import DebateOutput
from tools.records import Evidence


class CoTState(DebateOutput, total=False):
    """The claim plus the result contract."""

    claim: str


class MADState(DebateOutput, total=False):
    """The claim, the round counter and the judge's last decision."""

    claim: str
    round: int
    decision: str


class MADKEState(DebateOutput, total=False):
    """The claim, the shared documents, the round counter and the round's decision."""

    claim: str
    evidence: list[Evidence]
    round: int
    decision: str


class ReactState(DebateOutput, total=False):
    """The claim, searches used, the query waiting to run, and the agent's last move."""

    claim: str
    searches: int
    pending_query: str
    decision: str
