"""Records every layer passes around: evidence, per-role cost, error records, config errors."""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

from factdebate.tools.core.errors import FactDebateError


class Evidence(TypedDict):
    """One retrieved or supplied document.

    Attributes:
        id: Stable identifier (corpus id, URL, or dataset-provided id).
        title: Human-readable title; may be empty.
        text: The passage text shown to the agents.
        source: Which backend produced it (``milvus``, ``bm25``, ``tavily``, ``given``...).
        score: Backend relevance score (higher is better); 0.0 when not applicable.
    """

    id: str
    title: str
    text: str
    source: str
    score: float


class RoleCost(TypedDict):
    """LLM usage of one role."""

    llm_calls: int
    input_tokens: int
    output_tokens: int
    samples: NotRequired[int]
    """Answers received, where one call brought several (a provider's ``n``); absent: one each."""
    rejected: NotRequired[int]
    """Provider attempts refused or failed and then retried (429, 5xx, cut hangs), apart from
    ``llm_calls`` (one per call) and never counted against a call budget; absent: none."""


class ErrorRecord(TypedDict, total=False):
    """A recorded failure: parse failures, tool errors, timeouts. Never silently dropped."""

    round: int
    agent: str
    stage: str
    kind: str
    message: str
    raw: str


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
            if "rejected" in usage:
                have["rejected"] = have.get("rejected", 0) + int(usage["rejected"])
            if "samples" in usage or "samples" in have:
                had = have.get("samples", have["llm_calls"] - int(usage["llm_calls"]))
                have["samples"] = had + int(usage.get("samples", usage["llm_calls"]))
    return merged


class ModelConfigError(FactDebateError, ValueError):
    """A model setting that cannot be turned into a chat model."""
