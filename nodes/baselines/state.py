"""Working state of the Tool-MAD baselines: CoT, MAD, MADKE and ReAct."""

from __future__ import annotations

from factdebate.nodes.state import DebateOutput
from factdebate.tools.core.records import Evidence


class CoTState(DebateOutput, total=False):
    """The claim plus the result contract."""

    claim: str


class MADState(DebateOutput, total=False):
    """The claim, the round counter and the judge's last decision."""

    claim: str
    round: int
    decision: str


class MADKEOutput(DebateOutput, total=False):
    """The contract plus the shared documents (streamed as soon as they are retrieved)."""

    evidence: list[Evidence]


class MADKEState(MADKEOutput, total=False):
    """The claim, the shared documents, the round counter and the round's decision."""

    claim: str
    round: int
    decision: str


class ReactOutput(DebateOutput, total=False):
    """The contract plus the query the agent just asked for (streamed before it runs)."""

    pending_query: str


class ReactState(ReactOutput, total=False):
    """The claim, searches used, the query waiting to run, and the agent's last move."""

    claim: str
    searches: int
    decision: str
